import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 in front of a peer's port, as an attacker on the path would run one: it
/// forwards every byte both ways and, when `rewritesHellos` is on, sets the encryption preference in
/// each HELLO (the byte before the field count, which ends the first frame each way) to 0, none; with
/// `helloVersion`, it writes that protocol version into each HELLO.
final class HelloRewritingProxy: Sendable {
    /// The port to connect to instead of the target's.
    let port: Int
    private let listener: any Channel

    private init(listener: any Channel) {
        self.listener = listener
        self.port = listener.localAddress!.port!
    }

    /// Starts a proxy to `127.0.0.1:targetPort`.
    static func start(
        to targetPort: Int,
        rewritesHellos: Bool,
        helloVersion: UInt16? = nil
    ) async throws -> HelloRewritingProxy {
        let group = MultiThreadedEventLoopGroup.singleton
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        try inbound.pipeline.syncOperations.addHandler(
                            Forwarder(to: outbound, rewritesHello: rewritesHellos, version: helloVersion)
                        )
                        try outbound.pipeline.syncOperations.addHandler(
                            Forwarder(to: inbound, rewritesHello: rewritesHellos, version: helloVersion)
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
        private let version: UInt16?
        /// Bytes forwarded so far, and the first frame's length once its 4 bytes have passed.
        private var offset = 0
        private var lengthBytes: [UInt8] = []
        private var helloLastByte: Int?

        init(to partner: any Channel, rewritesHello: Bool, version: UInt16?) {
            self.partner = partner
            self.rewritesHello = rewritesHello
            self.version = version
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            if rewritesHello { rewrite(&buffer) }
            if let version { rewriteVersion(&buffer, to: version) }
            offset += buffer.readableBytes
            partner.writeAndFlush(buffer, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        /// The version is bytes 9 and 10 of the stream: after the length, the type byte and "PCON".
        private func rewriteVersion(_ buffer: inout ByteBuffer, to version: UInt16) {
            for (position, byte) in [(9, UInt8(version >> 8)), (10, UInt8(version & 0xFF))]
            where position >= offset && position < offset + buffer.readableBytes {
                buffer.setInteger(byte, at: buffer.readerIndex + position - offset)
            }
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
                } else if let last = helloLastByte, position == last - 1 {
                    buffer.setInteger(UInt8(0), at: buffer.readerIndex + index)
                    return
                } else if let last = helloLastByte, position > last {
                    return
                }
            }
        }
    }
}
