import NIOCore

/// Splits a byte stream into the raw baseline's frames: a 4-byte big-endian length, then that many
/// bytes. A length above the limit is an error, which closes the connection.
struct FrameLengthDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    /// A frame longer than this closes the connection.
    let maximumLength: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self).map(Int.init) else {
            return .needMoreData
        }
        guard length <= maximumLength else {
            throw BenchError.disconnected("a \(length)-byte raw frame, above the limit of \(maximumLength)")
        }
        guard buffer.readableBytes >= TCPSocket.frameHeaderBytes + length else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: TCPSocket.frameHeaderBytes)
        context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: length)!))
        return .continue
    }
}
