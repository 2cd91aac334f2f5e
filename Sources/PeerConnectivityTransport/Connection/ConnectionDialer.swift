import NIOCore
import NIOPosix
import PeerConnectivityCore

/// Opens connections as the inviter.
package enum ConnectionDialer {
    /// Connects to `host:port` and starts the handshake (HELLO and INVITE go out at once).
    ///
    /// - Parameters:
    ///   - host: a host name (resolved with getaddrinfo, so "name.local" works through nss-mdns) or address.
    ///   - port: the peer's port.
    ///   - localPeer: this side's identity.
    ///   - invitation: the expected peer, the context and the timeout.
    ///   - configuration: limits and timers.
    ///   - group: the event loops to run on.
    ///   - eventHandler: receives the connection's events.
    /// - Returns: the connection, handshake under way; await ``Connection/established``.
    /// - Throws: when the TCP connection cannot be made.
    package static func dial(
        host: String,
        port: Int,
        localPeer: PeerID,
        invitation: ConnectionStateMachine.Invitation,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        handler eventHandler: any ConnectionEventHandler
    ) async throws -> Connection {
        try await dial(
            host: host,
            port: port,
            localPeer: localPeer,
            role: .inviter(invitation),
            timeout: invitation.timeout,
            configuration: configuration,
            group: group,
            handler: eventHandler
        )
    }

    /// Connects to `host:port` to re-establish a link that dropped (HELLO and RESUME go out at once).
    ///
    /// - Parameters:
    ///   - host: the peer's address.
    ///   - port: the peer's session listener.
    ///   - localPeer: this side's identity.
    ///   - resumption: the peer, the secret, the count of messages received and the timeout.
    ///   - configuration: limits and timers.
    ///   - group: the event loops to run on.
    ///   - eventHandler: receives the connection's events.
    /// - Returns: the connection, handshake under way; await ``Connection/established``.
    /// - Throws: when the TCP connection cannot be made.
    package static func resume(
        host: String,
        port: Int,
        localPeer: PeerID,
        resumption: ConnectionStateMachine.Resumption,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        handler eventHandler: any ConnectionEventHandler
    ) async throws -> Connection {
        try await dial(
            host: host,
            port: port,
            localPeer: localPeer,
            role: .resumer(resumption),
            timeout: resumption.timeout,
            configuration: configuration,
            group: group,
            handler: eventHandler
        )
    }

    private static func dial(
        host: String,
        port: Int,
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        timeout: TimeAmount,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        handler eventHandler: any ConnectionEventHandler
    ) async throws -> Connection {
        let connectTimeout = min(timeout, .seconds(10))
        return try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
            .channelOption(.recvAllocator, value: ConnectionConfiguration.receiveAllocator)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ConnectionHandler.install(
                        on: channel,
                        localPeer: localPeer,
                        role: role,
                        configuration: configuration,
                        handler: eventHandler
                    )
                }
            }
    }
}
