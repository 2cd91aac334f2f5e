import NIOCore

/// The bytes a connection has read and not yet decoded, with the ``FrameDecoder`` that splits them
/// into frames: what a channel handler that decodes for itself keeps between reads.
///
/// The connection handler reads frames through this rather than through a `ByteToMessageHandler`
/// in front of it: no pipeline step per read, and no frame boxed into `NIOAny` and cast back per
/// frame. A buffer fully decoded is let go at once, so that NIO can read into it again; a frame cut by
/// the end of a read is completed by copying its own bytes, and the next read is decoded where it is.
package struct ReceiveBuffer {
    private var decoder: FrameDecoder
    /// The start of a frame that a read ended inside: only that frame's bytes are copied into it from
    /// the next read, so the next read is decoded where it is (not copied after these bytes).
    private var pending: ByteBuffer?
    /// The latest read, past what has been decoded or moved into `pending`.
    private var current: ByteBuffer?

    /// Makes a reader.
    ///
    /// - Parameter limit: the largest frame body accepted (see ``FrameDecoder``); the owner may raise it.
    package init(limit: FrameLengthLimit) {
        self.decoder = FrameDecoder(limit: limit)
    }

    /// Adds bytes read from the connection, after those not decoded yet.
    ///
    /// - Parameter bytes: the bytes, as read.
    package mutating func append(_ bytes: ByteBuffer) {
        guard var current = self.current.take() else {
            self.current = Self.compacted(bytes)
            return
        }
        // Only when bytes are added without taking the frames before them.
        var bytes = bytes
        current.writeBuffer(&bytes)
        self.current = current
    }

    /// A read that fills less than half of its storage, moved into a buffer of its own size.
    ///
    /// A stream's chunks are slices of the read they came in, and a reader that falls behind keeps
    /// them: each would keep the read's whole storage (up to 1 MiB however little was read) alive too.
    /// Copying only poorly filled reads keeps what waits under twice its bytes, at the cost of a copy
    /// of reads that were small anyway.
    static func compacted(_ bytes: ByteBuffer) -> ByteBuffer {
        guard bytes.storageCapacity > 2 * bytes.readableBytes else { return bytes }
        var copy = allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        return copy
    }

    private static let allocator = ByteBufferAllocator()

    /// The next whole frame, or `nil` when more bytes are needed.
    ///
    /// - Parameter allocator: where a large body's own buffer comes from.
    /// - Returns: a frame, or `nil`.
    /// - Throws: ``ProtocolError`` for a malformed frame; the bytes read are then dropped.
    package mutating func next(allocator: ByteBufferAllocator) throws(ProtocolError) -> Frame? {
        while var front = pending.take() {
            if var rest = current.take() {
                try complete(&front, from: &rest, allocator: allocator)
                if rest.readableBytes > 0 { current = rest }
            }
            let frame = try decoder.nextFrame(&front, allocator: allocator)
            if front.readableBytes > 0 {
                pending = front
                return frame
            }
            if let frame { return frame }
            // The front was the start of a large body, now being gathered: go on with the read.
        }
        // Out of the property while decoding, so that the decoder's slices do not make it copy.
        guard var bytes = current.take() else { return nil }
        let frame = try decoder.nextFrame(&bytes, allocator: allocator)
        if bytes.readableBytes > 0 {
            if frame == nil {
                pending = bytes  // the start of a frame, cut by the end of the read
            } else {
                current = bytes
            }
        }
        return frame
    }

    /// Moves from `rest` into `front` (the start of one frame) the bytes that complete the frame, or
    /// its length prefix; none of a body the decoder gathers into a buffer of its own.
    private func complete(
        _ front: inout ByteBuffer,
        from rest: inout ByteBuffer,
        allocator: ByteBufferAllocator
    ) throws(ProtocolError) {
        let prefix = MemoryLayout<UInt32>.size  // the body's length, before it
        if front.readableBytes < prefix {
            var head = rest.readSlice(length: min(prefix - front.readableBytes, rest.readableBytes))!
            front = Self.joined(&front, &head, allocator: allocator)
        }
        guard let length = try FrameParser.bodyLength(front, maximumFrameLength: decoder.limit.value),
            length < decoder.gatherThreshold
        else { return }
        let missing = prefix + length - front.readableBytes
        guard missing > 0 else { return }
        var body = rest.readSlice(length: min(missing, rest.readableBytes))!
        front = Self.joined(&front, &body, allocator: allocator)
    }

    /// The bytes of `first` then `second` in a buffer of their own. Not `writeBuffer` into `first`: it
    /// shares its storage with the read it came from, and that copy-on-write would copy the whole read.
    private static func joined(
        _ first: inout ByteBuffer,
        _ second: inout ByteBuffer,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        var joined = allocator.buffer(capacity: first.readableBytes + second.readableBytes)
        joined.writeBuffer(&first)
        joined.writeBuffer(&second)
        return joined
    }

    /// Takes the bytes not decoded yet (they belong to what follows the frames: a TLS handshake).
    ///
    /// - Returns: the bytes, or `nil` when there are none.
    package mutating func takeUndecoded() -> ByteBuffer? {
        guard var bytes = pending.take() else { return current.take() }
        if var rest = current.take() { bytes.writeBuffer(&rest) }
        return bytes
    }

    /// The stream has ended: checks that it did not end inside a frame.
    ///
    /// - Throws: ``ProtocolError/truncatedFrame(bytesLeft:)`` with the bytes of the cut frame.
    package mutating func finish() throws(ProtocolError) {
        var rest = takeUndecoded() ?? ByteBuffer()
        try decoder.finish(&rest)
    }
}
