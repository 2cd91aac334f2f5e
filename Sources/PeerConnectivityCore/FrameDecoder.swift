import NIOCore

/// Splits a TCP byte stream into ``Frame``s, enforcing the maximum frame length.
///
/// A thin `ByteToMessageDecoder` around ``FrameParser``. Errors are thrown as ``ProtocolError``;
/// the connection handler closes the connection with the error as the logged reason.
package struct FrameDecoder: ByteToMessageDecoder {
    package typealias InboundOut = Frame

    /// The largest frame body (type byte and payload) accepted; the owner may raise it.
    package let limit: FrameLengthLimit

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
        guard let frame = try FrameParser.parse(&buffer, maximumFrameLength: limit.value) else {
            return .needMoreData
        }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    package mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        guard buffer.readableBytes > 0 else { return .needMoreData }
        let left = buffer.readableBytes
        buffer.moveReaderIndex(to: buffer.writerIndex)
        throw ProtocolError.truncatedFrame(bytesLeft: left)
    }
}
