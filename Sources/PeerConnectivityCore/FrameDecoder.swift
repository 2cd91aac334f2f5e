import NIOCore

/// Splits a TCP byte stream into ``Frame``s, enforcing the maximum frame length.
///
/// A thin `ByteToMessageDecoder` around ``FrameParser``. Errors are thrown as ``ProtocolError``;
/// the connection handler closes the connection with the error as the logged reason.
package struct FrameDecoder: ByteToMessageDecoder {
    package typealias InboundOut = Frame

    /// The largest frame body (type byte and payload) accepted; the owner may raise it.
    package let limit: FrameLengthLimit
    /// Set by the handler when the connection switches to TLS: decoding stops after the HELLO.
    package let handOff: DecoderHandOff?

    /// Makes a decoder.
    ///
    /// - Parameters:
    ///   - limit: the largest frame body accepted; larger length prefixes are rejected
    ///     before their bodies are buffered.
    ///   - handOff: when given, lets the handler stop decoding and take the bytes past the HELLO.
    package init(limit: FrameLengthLimit, handOff: DecoderHandOff? = nil) {
        self.limit = limit
        self.handOff = handOff
    }

    /// Makes a decoder with a fixed limit.
    ///
    /// - Parameter maximumFrameLength: the largest frame body accepted.
    package init(maximumFrameLength: Int) {
        self.limit = FrameLengthLimit(maximumFrameLength)
        self.handOff = nil
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let handOff, handOff.isHandingOff { return .needMoreData }
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
        if let handOff, handOff.isHandingOff {
            // The bytes belong to the TLS handshake: the handler feeds them to the TLS handler.
            if buffer.readableBytes > 0 {
                handOff.leftover = buffer.readSlice(length: buffer.readableBytes)
            }
            return .needMoreData
        }
        while try decode(context: context, buffer: &buffer) == .continue {}
        guard buffer.readableBytes > 0 else { return .needMoreData }
        let left = buffer.readableBytes
        buffer.moveReaderIndex(to: buffer.writerIndex)
        throw ProtocolError.truncatedFrame(bytesLeft: left)
    }
}
