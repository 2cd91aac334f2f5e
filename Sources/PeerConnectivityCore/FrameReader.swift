import NIOCore

/// The bytes a connection has read and not yet decoded, with the ``FrameDecoder`` that splits them
/// into frames: what a channel handler that decodes for itself keeps between reads.
///
/// The connection handler reads frames through this rather than through a `ByteToMessageHandler`
/// in front of it: no pipeline step per read, and no frame boxed into `NIOAny` and cast back per
/// frame. A buffer fully decoded is let go at once, so that NIO can read into it again.
package struct FrameReader {
    private var decoder: FrameDecoder
    /// Bytes read and not decoded yet (the start of a frame); `nil` when there are none.
    private var pending: ByteBuffer?

    /// Makes a reader.
    ///
    /// - Parameter decoder: splits the bytes into frames and enforces the length limit.
    package init(decoder: FrameDecoder) {
        self.decoder = decoder
    }

    /// Adds bytes read from the connection, after those not decoded yet.
    ///
    /// - Parameter bytes: the bytes, as read.
    package mutating func append(_ bytes: ByteBuffer) {
        guard var pending = self.pending.take() else {
            self.pending = bytes
            return
        }
        var bytes = bytes
        pending.writeBuffer(&bytes)
        self.pending = pending
    }

    /// The next whole frame, or `nil` when more bytes are needed.
    ///
    /// - Parameter allocator: where a large body's own buffer comes from.
    /// - Returns: a frame, or `nil`.
    /// - Throws: ``ProtocolError`` for a malformed frame; the bytes read are then dropped.
    package mutating func next(allocator: ByteBufferAllocator) throws(ProtocolError) -> Frame? {
        // Out of the property while decoding, so that the decoder's slices do not make it copy.
        guard var bytes = pending.take() else { return nil }
        let frame = try decoder.nextFrame(&bytes, allocator: allocator)
        if bytes.readableBytes > 0 { pending = bytes }
        return frame
    }

    /// Takes the bytes not decoded yet (they belong to what follows the frames: a TLS handshake).
    ///
    /// - Returns: the bytes, or `nil` when there are none.
    package mutating func takeUndecoded() -> ByteBuffer? {
        pending.take()
    }

    /// The stream has ended: checks that it did not end inside a frame.
    ///
    /// - Throws: ``ProtocolError/truncatedFrame(bytesLeft:)`` with the bytes of the cut frame.
    package mutating func finish() throws(ProtocolError) {
        var rest = pending.take() ?? ByteBuffer()
        try decoder.finish(&rest)
    }
}
