import NIOCore

/// The bytes a connection has read and not yet decoded, with the ``FrameDecoder`` that splits them
/// into frames: what a channel handler that decodes for itself keeps between reads.
///
/// The connection handler reads frames through this rather than through a `ByteToMessageHandler`
/// in front of it: no pipeline step per read, and no frame boxed into `NIOAny` and cast back per
/// frame. A buffer fully decoded is let go at once, so that NIO can read into it again; a frame cut by
/// the end of a read is completed by copying its own bytes, and the next read is decoded where it is.
///
/// A CHUNK frame cut by the end of a read is the exception: it comes out in pieces, each a `.chunk` of
/// the same channel whose payload is a slice of the read it came in, so that a stream's bytes are not
/// copied to be put together (most 256 KiB reads cut a 64 KiB CHUNK). The pieces' payloads, in order,
/// are the frame's, and none is empty; a channel's reader takes its bytes in pieces of any size anyway.
/// Only the first 9 bytes (length, type, channel) of a CHUNK cut inside them are copied, as a frame's
/// start is; a CHUNK the parser would refuse (channel 0, a payload of no bytes or too many) is completed
/// and refused whole, as any frame.
package struct ReceiveBuffer {
    private var decoder: FrameDecoder
    /// The start of a frame that a read ended inside: only that frame's bytes are copied into it from
    /// the next read, so the next read is decoded where it is (not copied after these bytes).
    private var pending: ByteBuffer?
    /// The latest read, past what has been decoded or moved into `pending`.
    private var current: ByteBuffer?
    /// A CHUNK frame handed out in pieces: its header has been taken, and the rest of its payload comes
    /// out of the next reads as they arrive (``nextPiece()``).
    private var cutChunk: CutChunk?

    private struct CutChunk {
        let channel: UInt32
        /// Payload bytes still to come.
        var remaining: Int
        /// The frame's bytes received so far, header included (for a stream that ends inside it).
        var received: Int
    }

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
            // The rest of a large body being gathered is copied into the body's own buffer, not sliced. (While
            // one is, nothing is pending and no CHUNK is cut: the decoder takes every byte up to its end.)
            self.current = Self.compacted(bytes, gatheredFirst: decoder.bytesStillToGather)
            return
        }
        // Only when bytes are added without taking the frames before them.
        var bytes = bytes
        current.writeBuffer(&bytes)
        self.current = current
    }

    /// Adds bytes whose buffer their owner writes into again (TLS's plaintext buffer), as ``append(_:)``
    /// does, but copied first into a buffer of their own size: the frames and chunks taken from them are
    /// slices of that copy, never of the owner's buffer. Every byte is copied once, and only here.
    ///
    /// - Parameter bytes: the bytes, as read.
    package mutating func append(copying bytes: ByteBuffer) {
        var copy = Self.allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        append(copy)
    }

    /// A read that fills less than half of its storage, moved into a buffer of its own size, unless
    /// nothing taken from it can outlive its decoding.
    ///
    /// A stream's chunks are slices of the read they came in, and a reader that falls behind keeps
    /// them: each would keep the read's whole storage (up to 1 MiB however little was read) alive too.
    /// Copying only poorly filled reads keeps what waits under twice its bytes, at the cost of a copy
    /// of reads that were small anyway. A read of whole frames none of which leaves a slice behind (see
    /// ``leavesNoSlice(_:gatheredFirst:)``), the usual read of one small message or of the middle of a large
    /// one, is not copied: its storage is free again once its frames are handled, and the socket reads into it
    /// again.
    ///
    /// - Parameters:
    ///   - bytes: the read.
    ///   - gatheredFirst: how many of its first bytes finish a large body being gathered.
    static func compacted(_ bytes: ByteBuffer, gatheredFirst: Int) -> ByteBuffer {
        guard bytes.storageCapacity > 2 * bytes.readableBytes, !leavesNoSlice(bytes, gatheredFirst: gatheredFirst)
        else { return bytes }
        var copy = allocator.buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        return copy
    }

    /// The largest DATA payload its receiver must copy out (as the session does, into `Data`) rather
    /// than keep as a slice of the read: 256 KiB, over ``FrameDecoder/defaultGatherThreshold``, from which
    /// a body is gathered into a buffer of its own anyway.
    package static let copiedMessageLimit = 256 << 10

    /// Whether `bytes` are whole frames of which no slice of the read is kept once each is handled: no
    /// CHUNK (a stream or resource keeps its payload). Only DATA and CHUNK frames carry slices, every other
    /// frame is parsed into values, and a DATA payload is copied out by its receiver (up to
    /// ``copiedMessageLimit``) or gathered into a buffer of its own (from the gather threshold). A frame cut
    /// by the end of the read, or a length that cannot be right, says no (the decoder decides about it).
    ///
    /// - Parameters:
    ///   - bytes: the read.
    ///   - gatheredFirst: how many of its first bytes the decoder copies into a large body it is gathering
    ///     (``FrameDecoder/bytesStillToGather``): they are no frame's start, and leave no slice.
    package static func leavesNoSlice(_ bytes: ByteBuffer, gatheredFirst: Int = 0) -> Bool {
        var offset = bytes.readerIndex + gatheredFirst
        while offset < bytes.writerIndex {
            guard let length = bytes.getInteger(at: offset, as: UInt32.self), length > 0,
                let type = bytes.getInteger(at: offset + 4, as: UInt8.self),
                Int(length) <= bytes.writerIndex - offset - 4,
                type != FrameType.chunk.rawValue
            else { return false }
            offset += 4 + Int(length)
        }
        return true
    }

    private static let allocator = ByteBufferAllocator()

    /// The next whole frame, or `nil` when more bytes are needed.
    ///
    /// - Parameter allocator: where a large body's own buffer comes from.
    /// - Returns: a frame, or `nil`.
    /// - Throws: ``ProtocolError`` for a malformed frame; the bytes read are then dropped.
    package mutating func next(allocator: ByteBufferAllocator) throws(ProtocolError) -> Frame? {
        if cutChunk != nil { return nextPiece() }
        while var front = pending.take() {
            if var rest = current.take() {
                try complete(&front, from: &rest, allocator: allocator)
                if rest.readableBytes > 0 { current = rest }
            }
            let frame = try decoder.nextFrame(&front, allocator: allocator)
            if front.readableBytes > 0 {
                if frame == nil, startPieces(&front) { return nextPiece(from: &front) }
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
                // The start of a frame, cut by the end of the read.
                if startPieces(&bytes) { return nextPiece(from: &bytes) }
                pending = bytes
            } else {
                current = bytes
            }
        }
        return frame
    }

    /// The channel and payload length of the CHUNK frame `bytes` start with, if their first 9 bytes say
    /// one the parser accepts; `nil` for any other frame, or when fewer than 9 bytes are there.
    private static func chunkHeader(_ bytes: ByteBuffer) -> (channel: UInt32, payloadLength: Int)? {
        let start = bytes.readerIndex
        guard bytes.readableBytes >= FrameEncoder.chunkHeaderLength,
            bytes.getInteger(at: start + 4, as: UInt8.self) == FrameType.chunk.rawValue,
            let length = bytes.getInteger(at: start, as: UInt32.self),
            let channel = bytes.getInteger(at: start + 5, as: UInt32.self), channel != 0
        else { return nil }
        let payloadLength = Int(length) - 5  // the length counts the type byte and the channel
        guard (1...WireProtocol.maximumChunkLength).contains(payloadLength) else { return nil }
        return (channel, payloadLength)
    }

    /// Takes the header off `bytes` if they start a CHUNK frame they do not hold whole (the decoder
    /// returned none), which then comes out in pieces: the payload in `bytes` first.
    private mutating func startPieces(_ bytes: inout ByteBuffer) -> Bool {
        guard let (channel, payloadLength) = Self.chunkHeader(bytes) else { return false }
        bytes.moveReaderIndex(forwardBy: FrameEncoder.chunkHeaderLength)
        cutChunk = CutChunk(channel: channel, remaining: payloadLength, received: FrameEncoder.chunkHeaderLength)
        return true
    }

    /// The next piece of the cut CHUNK from `bytes`, the rest of the buffer its header was in (that
    /// frame's bytes only), or, when none are left there, from the latest read.
    private mutating func nextPiece(from bytes: inout ByteBuffer) -> Frame? {
        guard bytes.readableBytes > 0 else { return nextPiece() }
        let frame = piece(of: &bytes)
        assert(bytes.readableBytes == 0, "a cut CHUNK's buffer held more than its payload")
        return frame
    }

    /// The next piece of the cut CHUNK from the latest read, or `nil` when more bytes are needed.
    private mutating func nextPiece() -> Frame? {
        guard var bytes = current.take(), bytes.readableBytes > 0 else { return nil }
        let frame = piece(of: &bytes)
        if bytes.readableBytes > 0 { current = bytes }
        return frame
    }

    /// As much of the cut CHUNK's payload as `bytes` hold, taken off them, as a `.chunk` of its channel.
    private mutating func piece(of bytes: inout ByteBuffer) -> Frame {
        var cut = cutChunk!
        let piece = bytes.readSlice(length: min(cut.remaining, bytes.readableBytes))!
        cut.remaining -= piece.readableBytes
        cut.received += piece.readableBytes
        cutChunk = cut.remaining > 0 ? cut : nil
        return .chunk(channel: cut.channel, piece)
    }

    /// Moves from `rest` into `front` (the start of one frame) the bytes that complete the frame, or
    /// its length prefix; none of a body the decoder gathers into a buffer of its own, and of a CHUNK
    /// handed out in pieces only its first 9 bytes.
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
        // The first 9 bytes first: enough to tell a CHUNK whose payload comes out in pieces, uncopied.
        let header = FrameEncoder.chunkHeaderLength
        if front.readableBytes < header, prefix + length > header {
            var head = rest.readSlice(length: min(header - front.readableBytes, rest.readableBytes))!
            front = Self.joined(&front, &head, allocator: allocator)
        }
        if Self.chunkHeader(front) != nil { return }
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
        // The rest of a CHUNK is no frame's start: nothing follows a CHUNK in a handshake but the close.
        cutChunk = nil
        guard var bytes = pending.take() else { return current.take() }
        if var rest = current.take() { bytes.writeBuffer(&rest) }
        return bytes
    }

    /// The stream has ended: checks that it did not end inside a frame.
    ///
    /// - Throws: ``ProtocolError/truncatedFrame(bytesLeft:)`` with the bytes of the cut frame.
    package mutating func finish() throws(ProtocolError) {
        if let cut = cutChunk.take() {
            throw .truncatedFrame(bytesLeft: cut.received + (current.take()?.readableBytes ?? 0))
        }
        var rest = takeUndecoded() ?? ByteBuffer()
        try decoder.finish(&rest)
    }
}
