import NIOCore

/// The TLS side of the raw echo server: writes each frame back whole, as the plain side does, and
/// flushes once per read.
final class FrameEchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let log: @Sendable (String) -> Void
    private var frames = 0

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let body = unwrapInboundIn(data)
        var frame = context.channel.allocator.buffer(capacity: TCPSocket.frameHeaderBytes + body.readableBytes)
        frame.writeInteger(UInt32(body.readableBytes))
        frame.writeImmutableBuffer(body)
        context.write(wrapOutboundOut(frame), promise: nil)
        frames += 1
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        log("raw TLS connection closed after \(frames) frames")
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        log("raw TLS connection failed: \(error)")
        context.close(promise: nil)
    }
}
