import NIOCore
import NIOPosix
import PeerConnectivityCore
import Synchronization

/// A listening TCP socket whose connections start as invitees.
package final class ConnectionListener: Sendable {
    private let serverChannel: any Channel
    /// The bound port (the ephemeral one the system chose, when asked for port 0).
    package let port: Int

    private init(serverChannel: any Channel, port: Int) {
        self.serverChannel = serverChannel
        self.port = port
    }

    /// Binds and starts accepting connections.
    ///
    /// - Parameters:
    ///   - host: the address to bind, e.g. "0.0.0.0", or "127.0.0.1" for loopback only.
    ///   - port: the port, 0 for an ephemeral one.
    ///   - localPeer: this side's identity, sent in HELLO.
    ///   - configuration: limits and timers of accepted connections.
    ///   - maximumPendingHandshakes: connections not yet accepted into a session above this are
    ///     closed at once.
    ///   - group: the event loops to run on.
    ///   - delegate: receives every accepted connection's events until a session accepts it.
    /// - Returns: the listener.
    /// - Throws: if the address cannot be bound.
    package static func bind(
        host: String,
        port: Int,
        localPeer: PeerID,
        configuration: ConnectionConfiguration,
        maximumPendingHandshakes: Int,
        group: any EventLoopGroup,
        delegate: any ConnectionDelegate
    ) async throws -> ConnectionListener {
        let pending = PendingCounter(limit: maximumPendingHandshakes)
        let logger = configuration.logger
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
            .childChannelOption(.recvAllocator, value: ConnectionConfiguration.receiveAllocator)
            .childChannelInitializer { channel in
                guard pending.enter() else {
                    logger.warning(
                        "refusing connection from \(channel.remoteAddress.map { "\($0)" } ?? "?"): \(maximumPendingHandshakes) handshakes already pending"
                    )
                    return channel.close()
                }
                return channel.eventLoop.makeCompletedFuture {
                    let connection = try ConnectionHandler.install(
                        on: channel,
                        localPeer: localPeer,
                        role: .invitee,
                        configuration: configuration,
                        delegate: delegate
                    )
                    connection.established.whenComplete { _ in pending.leave() }
                }
            }
            .bind(host: host, port: port)
            .get()
        return ConnectionListener(serverChannel: channel, port: channel.localAddress?.port ?? port)
    }

    /// Stops accepting connections; those already accepted go on.
    package func close() async {
        try? await serverChannel.close()
    }
}

/// Counts connections in their handshake, up to a limit.
private final class PendingCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func enter() -> Bool {
        if count.add(1, ordering: .relaxed).newValue > limit {
            count.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func leave() {
        count.subtract(1, ordering: .relaxed)
    }
}
