import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 in front of a peer's port, as an attacker on the path would run one: it
/// forwards every byte both ways and, when `rewritesHellos` is on, sets the encryption preference in
/// each HELLO (the last byte of the first frame each way) to 0, none.
final class HelloRewritingProxy: Sendable {
    /// The port to connect to instead of the target's.
    let port: Int
    private let listener: any Channel

    private init(listener: any Channel) {
        self.listener = listener
        self.port = listener.localAddress!.port!
    }

    /// Starts a proxy to `127.0.0.1:targetPort`.
    static func start(to targetPort: Int, rewritesHellos: Bool) async throws -> HelloRewritingProxy {
        let group = MultiThreadedEventLoopGroup.singleton
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        try inbound.pipeline.syncOperations.addHandler(
                            Forwarder(to: outbound, rewritesHello: rewritesHellos)
                        )
                        try outbound.pipeline.syncOperations.addHandler(
                            Forwarder(to: inbound, rewritesHello: rewritesHellos)
                        )
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return HelloRewritingProxy(listener: listener)
    }

    /// Stops listening (connections already proxied go on until either end closes).
    func stop() async {
        try? await listener.close()
    }

    /// Writes what one side sends to the other, rewriting the HELLO's last byte on the way.
    private final class Forwarder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        private let partner: any Channel
        private let rewritesHello: Bool
        /// Bytes forwarded so far, and the first frame's length once its 4 bytes have passed.
        private var offset = 0
        private var lengthBytes: [UInt8] = []
        private var helloLastByte: Int?

        init(to partner: any Channel, rewritesHello: Bool) {
            self.partner = partner
            self.rewritesHello = rewritesHello
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            if rewritesHello { rewrite(&buffer) }
            offset += buffer.readableBytes
            partner.writeAndFlush(buffer, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func rewrite(_ buffer: inout ByteBuffer) {
            for index in 0..<buffer.readableBytes {
                let position = offset + index
                if position < 4 {
                    lengthBytes.append(buffer.getInteger(at: buffer.readerIndex + index)!)
                    if lengthBytes.count == 4 {
                        let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
                        helloLastByte = 4 + length - 1
                    }
                } else if let last = helloLastByte, position == last {
                    buffer.setInteger(UInt8(0), at: buffer.readerIndex + index)
                    return
                } else if let last = helloLastByte, position > last {
                    return
                }
            }
        }
    }
}
