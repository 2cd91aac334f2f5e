import NIOCore

/// Splits a TCP byte stream into ``Frame``s, enforcing the maximum frame length.
///
/// Around ``FrameParser``; the connection handler drives it through a ``ReceiveBuffer``, and it is
/// also a `ByteToMessageDecoder` for pipelines that want one (tests, tools). Errors are thrown as
/// ``ProtocolError``; the connection handler closes the connection with the error as the logged reason.
package struct FrameDecoder: ByteToMessageDecoder {
    package typealias InboundOut = Frame

    /// The largest frame body (type byte and payload) accepted; the owner may raise it.
    package let limit: FrameLengthLimit

    /// A large frame's body, filling as its bytes arrive.
    private struct Gathering {
        var body: ByteBuffer
        var remaining: Int
    }

    private var gathering: Gathering?
    /// Buffers bodies were gathered into before, oldest first, to gather the next ones into. A buffer
    /// whose frame the application has let go is ours alone again and is written in place: no fresh
    /// pages to fault in, nothing for malloc to give back to the kernel and take again (an `madvise`
    /// and a TLB shootdown across threads each time). One still held is skipped.
    private var spares: [ByteBuffer] = []
    /// The bytes of all of `spares` (their bodies' lengths: a buffer's capacity is rounded up to a
    /// power of two, but pages past the body are never touched).
    private var spareBytes = 0

    /// At most this many bytes of spare bodies are kept per connection, beyond the first one (as much
    /// as the session lets wait unread); a body gathered past it gets a buffer that is freed with it.
    package static let spareBytesLimit = 8 << 20
    /// Makes a decoder.
    ///
    /// - Parameter limit: the largest frame body accepted; larger length prefixes are rejected
    ///   before their bodies are buffered.
    package init(limit: FrameLengthLimit) {
        self.limit = limit
    }

    /// Makes a decoder with a fixed limit.
    ///
    /// - Parameter maximumFrameLength: the largest frame body accepted.
    package init(maximumFrameLength: Int) {
        self.limit = FrameLengthLimit(maximumFrameLength)
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try nextFrame(&buffer, allocator: context.channel.allocator) else {
            return .needMoreData
        }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    /// Bodies at least this long are gathered into a buffer of their own as they arrive (one copy
    /// each), whether or not they arrived whole: a slice of the cumulation held by the application
    /// would pin it, and every later read would be copied into fresh memory. Left in the decoder's cumulation instead, a 1 MiB message would be copied as the
    /// cumulation grows, again when the unread rest is moved to the front, and would keep a buffer
    /// twice its size alive for as long as the application holds it.
    package static let defaultGatherThreshold = 128 << 10

    /// See ``defaultGatherThreshold``; tests lower it to drive small frames through the same path.
    package var gatherThreshold = FrameDecoder.defaultGatherThreshold

    /// The next whole frame from the front of `buffer` (consumed), or `nil` when more bytes are needed.
    ///
    /// - Parameters:
    ///   - buffer: bytes received.
    ///   - allocator: where a large body's own buffer comes from.
    /// - Returns: a frame, or `nil`.
    /// - Throws: ``ProtocolError`` for a length over the limit, an unknown type or a malformed body.
    package mutating func nextFrame(_ buffer: inout ByteBuffer, allocator: ByteBufferAllocator) throws(ProtocolError)
        -> Frame?
    {
        if gathering == nil {
            guard let length = try FrameParser.bodyLength(buffer, maximumFrameLength: limit.value) else { return nil }
            guard length >= gatherThreshold else {
                return try FrameParser.parse(&buffer, bodyLength: length)
            }
            buffer.moveReaderIndex(forwardBy: 4)
            let body = takeSpare(capacity: length) ?? allocator.buffer(capacity: length)
            gathering = Gathering(body: body, remaining: length)
        }
        let count = min(gathering!.remaining, buffer.readableBytes)
        var part = buffer.readSlice(length: count)!
        gathering!.body.writeBuffer(&part)
        gathering!.remaining -= count
        guard gathering!.remaining == 0 else { return nil }
        var body = gathering!.body
        gathering = nil
        keepSpare(body)
        return try FrameParser.parse(body: &body)
    }

    /// The bytes of a large frame's body still to come, copied into its own buffer as they arrive (none
    /// when no body is being gathered).
    package var bytesStillToGather: Int { gathering?.remaining ?? 0 }

    /// A spare of at least `capacity` bytes (and not much more, so that a small body does not hold a
    /// large buffer) that nobody else holds, emptied; `nil` if there is none.
    private mutating func takeSpare(capacity: Int) -> ByteBuffer? {
        let fits = capacity...(2 * capacity)
        for index in spares.indices where fits.contains(spares[index].capacity) {
            let length = spares[index].writerIndex
            if spares[index].modifyIfUniquelyOwned({ $0.clear() }) != nil {
                // Counted out at the length it was counted in with, before `clear()` emptied it.
                spareBytes -= length
                return spares.remove(at: index)
            }
        }
        return nil
    }

    /// Keeps a gathered body's buffer for later bodies, unless the spares are at their limit (then it
    /// is freed once the application lets go of its frame).
    private mutating func keepSpare(_ body: ByteBuffer) {
        guard spares.isEmpty || spareBytes + body.writerIndex <= Self.spareBytesLimit else { return }
        spares.append(body)
        spareBytes += body.writerIndex
    }

    /// How many spare bodies the decoder keeps (tests).
    package var spareCount: Int { spares.count }

    package mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        try finish(&buffer)
        return .needMoreData
    }

    /// At the end of the stream, after the last whole frame: throws if a frame was cut short, in
    /// `buffer` or being gathered; empties both.
    ///
    /// - Parameter buffer: the bytes left after the last whole frame.
    /// - Throws: ``ProtocolError/truncatedFrame(bytesLeft:)`` with the bytes of the cut frame.
    package mutating func finish(_ buffer: inout ByteBuffer) throws(ProtocolError) {
        let gathered = gathering.map { $0.body.readableBytes + 4 } ?? 0
        gathering = nil
        let left = buffer.readableBytes + gathered
        buffer.moveReaderIndex(to: buffer.writerIndex)
        guard left > 0 else { return }
        throw ProtocolError.truncatedFrame(bytesLeft: left)
    }
}
