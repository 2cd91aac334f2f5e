import NIOCore

/// Put at the head of a connection's pipeline by ``Connection/silence()``: from then on nothing read
/// from the socket reaches the connection and nothing it writes reaches the socket, as when a cable is
/// cut or a host vanishes without closing anything (tests of the liveness timeout and reconnection).
final class SilencingHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.succeed()
    }

    func flush(context: ChannelHandlerContext) {}
}
