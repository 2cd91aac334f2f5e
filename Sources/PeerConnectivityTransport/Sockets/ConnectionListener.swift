import Logging
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
    /// Every new connection is admitted; when too many are in their handshake, the oldest gives way
    /// (``HandshakeAdmission``): it is closed with GOODBYE ``DisconnectReason/overloaded``. A
    /// connection leaves its handshake when its INVITE arrives (the invitation limits take over),
    /// or when it is established or closed; one that does neither is closed at the handshake timeout.
    ///
    /// - Parameters:
    ///   - host: the address to bind: "::" for every interface, IPv6 and IPv4 (``DualStack``; IPv4 only
    ///     where the system has no IPv6), "0.0.0.0" for IPv4 only, "127.0.0.1" or "::1" for loopback only.
    ///   - port: the port, 0 for an ephemeral one.
    ///   - localPeer: this side's identity, sent in HELLO.
    ///   - configuration: limits and timers of accepted connections.
    ///   - handshakeLimits: how many connections may be in their handshake, in all and per source address.
    ///   - group: the event loops to run on.
    ///   - delegate: receives every accepted connection's events until a session accepts it.
    /// - Returns: the listener.
    /// - Throws: if the address cannot be bound.
    package static func bind(
        host: String,
        port: Int,
        localPeer: PeerID,
        configuration: ConnectionConfiguration,
        handshakeLimits: HandshakeAdmission.Limits,
        group: any EventLoopGroup,
        delegate: any ConnectionDelegate
    ) async throws -> ConnectionListener {
        let tracker = HandshakeTracker(limits: handshakeLimits, logger: configuration.logger)
        let logger = configuration.logger
        let warnings = configuration.warnings
        let addresses = DualStack.bindAddresses(for: host)
        for (index, address) in addresses.enumerated() {
            var bootstrap = ServerBootstrap(group: group)
                .serverChannelInitializer { channel in
                    // Out of descriptors, accept fails at once as long as a connection waits: without a pause,
                    // the loop would retry thousands of times a second.
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            AcceptBackoff(logger: logger, warnings: warnings)
                        )
                    }
                }
                // SO_REUSEADDR lets a listener on a fixed port start again while its old connections linger in
                // TIME_WAIT. On an ephemeral port it is of no use, and harmful: while one socket with it is bound
                // and not yet listening, another with it may bind the same port on another address.
                .serverChannelOption(.socketOption(.so_reuseaddr), value: port == 0 ? 0 : 1)
                .serverChannelOption(.backlog, value: 256)
                // One connection per read: AcceptBackoff checks after each that a descriptor is left, and NIO would
                // otherwise accept more in the same read past a failed check.
                .serverChannelOption(.maxMessagesPerRead, value: 1)
            if address == DualStack.anyAddress {
                bootstrap = bootstrap.serverChannelOption(DualStack.ipv6OnlyOption, value: 0)
            }
            let channel: any Channel
            do {
                channel =
                    try await bootstrap
                    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                    .childChannelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
                    .childChannelOption(.recvAllocator, value: ConnectionConfiguration.receiveAllocator)
                    .childChannelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let connection = try ConnectionHandler.install(
                                on: channel,
                                localPeer: localPeer,
                                role: .invitee,
                                configuration: configuration,
                                delegate: delegate
                            )
                            let source = channel.remoteAddress.flatMap(Platform.addressText) ?? "?"
                            tracker.admit(connection, from: source)
                        }
                    }
                    .bind(host: address, port: port)
                    .get()
            } catch  where index < addresses.count - 1 {
                logger.notice("cannot listen on [\(address)]:\(port) (\(error)): listening on IPv4 only")
                continue
            }
            return ConnectionListener(serverChannel: channel, port: channel.localAddress?.port ?? port)
        }
        preconditionFailure("DualStack.bindAddresses(for:) returned no address")
    }

    /// Stops accepting connections; those already accepted go on.
    package func close() async {
        try? await serverChannel.close()
    }
}

/// The listener's pending handshakes: a ``HandshakeAdmission`` shared by the event loops, and the
/// connections it names, so that the one that gives way can be closed.
private final class HandshakeTracker: Sendable {
    private struct State {
        var admission: HandshakeAdmission
        var connections: [UInt64: Connection] = [:]
        var nextID: UInt64 = 0
        var evictions = 0
    }

    private let state: Mutex<State>
    private let logger: Logger

    init(limits: HandshakeAdmission.Limits, logger: Logger) {
        self.state = Mutex(State(admission: HandshakeAdmission(limits: limits)))
        self.logger = logger
    }

    /// Admits a new connection; closes the pending one that gives way for it, if any.
    func admit(_ connection: Connection, from address: String) {
        let (id, evicted, evictions) = state.withLock { state -> (UInt64, Connection?, Int) in
            let id = state.nextID
            state.nextID += 1
            var evicted: Connection?
            if let evictedID = state.admission.arrived(id, from: address) {
                evicted = state.connections.removeValue(forKey: evictedID)
                state.evictions += 1
            }
            state.connections[id] = connection
            return (id, evicted, state.evictions)
        }
        connection.handshakeFinished.whenComplete { [self] _ in
            state.withLock { state in
                state.admission.finished(id)
                state.connections[id] = nil
            }
        }
        guard let evicted else { return }
        let remote = evicted.channel.remoteAddress.map(Platform.hostPort) ?? "?"
        // One line per eviction would be a line per flood connection: the first, then every 100th.
        if evictions == 1 || evictions % 100 == 0 {
            logger.warning("too many connections in their handshake: closing the oldest (\(evictions) so far)")
        }
        logger.debug("closing \(remote): the oldest pending handshake, to admit \(address)")
        evicted.close(.overloaded.with(detail: "the oldest of too many connections in their handshake"))
    }
}
