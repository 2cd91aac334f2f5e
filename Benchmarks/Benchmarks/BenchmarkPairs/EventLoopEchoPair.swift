import NIOCore
import NIOPosix

/// An echo server and a client connected to it on 127.0.0.1, each on an event loop group of one thread.
package final class EventLoopEchoPair: Sendable {
    private let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let server: any Channel
    private let client: any Channel

    /// Starts the echo server and connects the client to it.
    ///
    /// - Throws: when either cannot be set up.
    package init() async throws {
        await LoopPinning.pin(serverGroup, from: 0)
        await LoopPinning.pin(clientGroup, from: 1)
        server = try await ServerBootstrap(group: serverGroup)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Echo()) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = server.localAddress?.port else { throw BenchmarkFailure("the echo server has no port") }
        client = try await ClientBootstrap(group: clientGroup)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Pinger()) }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
    }

    /// Sends 64 bytes `count` times, each once the echo of the one before has come back, all from the client's
    /// event loop; returns when the last echo has.
    package func roundTrips(count: Int) async throws {
        let client = self.client
        try await client.eventLoop.flatSubmit {
            do {
                let pinger = try client.pipeline.syncOperations.handler(type: Pinger.self)
                return pinger.start(count: count, on: client)
            } catch {
                return client.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }

    /// Closes both channels and shuts both event loops down.
    package func stop() async {
        try? await client.close()
        try? await server.close()
        try? await clientGroup.shutdownGracefully()
        try? await serverGroup.shutdownGracefully()
    }
}

/// Writes back what it reads.
private final class Echo: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
}

/// Sends 64 bytes, and the next as soon as they have all come back, until the round trips asked for are done.
private final class Pinger: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let message = ByteBuffer(repeating: 0x45, count: 64)
    private var left = 0
    private var received = 0
    private var done: EventLoopPromise<Void>?

    func start(count: Int, on channel: any Channel) -> EventLoopFuture<Void> {
        let done = channel.eventLoop.makePromise(of: Void.self)
        self.done = done
        left = count
        received = 0
        channel.writeAndFlush(message, promise: nil)
        return done.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytes
        guard received >= message.readableBytes else { return }
        received -= message.readableBytes
        left -= 1
        if left == 0 {
            done?.succeed(())
            done = nil
        } else {
            context.writeAndFlush(wrapOutboundOut(message), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        done?.fail(BenchmarkFailure("the echo connection ended"))
        done = nil
        context.fireChannelInactive()
    }
}
