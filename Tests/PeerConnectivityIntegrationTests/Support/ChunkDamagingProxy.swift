import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 in front of a peer's port that damages data on the way, as a faulty link
/// or a bug below the protocol would: it follows the frames the dialling side sends and flips one bit
/// in the payload of its `chunkIndex`-th CHUNK (counting from 0), once. Everything else passes as it is.
/// Plaintext connections only (under TLS the damage would break the record, not the chunk).
final class ChunkDamagingProxy: Sendable {
    /// The port to connect to instead of the target's.
    let port: Int
    private let listener: any Channel

    private init(listener: any Channel) {
        self.listener = listener
        self.port = listener.localAddress!.port!
    }

    /// Starts a proxy to `127.0.0.1:targetPort`.
    static func start(to targetPort: Int, damagingChunk chunkIndex: Int) async throws -> ChunkDamagingProxy {
        let group = MultiThreadedEventLoopGroup.singleton
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMapThrowing { outbound in
                        try inbound.pipeline.syncOperations.addHandler(Forwarder(to: outbound, damaging: chunkIndex))
                        try outbound.pipeline.syncOperations.addHandler(Forwarder(to: inbound, damaging: nil))
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return ChunkDamagingProxy(listener: listener)
    }

    /// Stops listening.
    func stop() async {
        try? await listener.close()
    }

    private final class Forwarder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        private let partner: any Channel
        private var damaging: Int?
        /// Where the parser is: the bytes of the next frame's header read so far, and what is left of
        /// the current frame's body after its header.
        private var header: [UInt8] = []
        private var bodyLeft = 0
        private var inChunk = false
        private var bodyOffset = 0
        private var chunksSeen = 0

        init(to partner: any Channel, damaging: Int?) {
            self.partner = partner
            self.damaging = damaging
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            if damaging != nil { follow(&buffer) }
            partner.writeAndFlush(buffer, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func follow(_ buffer: inout ByteBuffer) {
            var index = 0
            while index < buffer.readableBytes {
                if bodyLeft == 0 {
                    header.append(buffer.getInteger(at: buffer.readerIndex + index)!)
                    index += 1
                    if header.count == 5 {
                        bodyLeft = header[0..<4].reduce(0) { $0 << 8 | Int($1) } - 1
                        inChunk = header[4] == 0x21
                        bodyOffset = 0
                        header = []
                    }
                    continue
                }
                let run = min(bodyLeft, buffer.readableBytes - index)
                // The payload starts after the 4-byte channel; flip a bit in its middle.
                if inChunk, let target = damaging, chunksSeen == target {
                    let spot = 4 + 100
                    if spot >= bodyOffset && spot < bodyOffset + run {
                        let at = buffer.readerIndex + index + spot - bodyOffset
                        buffer.setInteger(buffer.getInteger(at: at, as: UInt8.self)! ^ 0x10, at: at)
                        damaging = nil
                    }
                }
                bodyOffset += run
                bodyLeft -= run
                index += run
                if bodyLeft == 0, inChunk { chunksSeen += 1 }
            }
        }
    }
}
