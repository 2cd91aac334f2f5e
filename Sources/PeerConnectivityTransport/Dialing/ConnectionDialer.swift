import NIOCore
import NIOPosix
import PeerConnectivityCore

/// Opens connections as the inviter.
package enum ConnectionDialer {
    /// Connects to the target and starts the handshake (HELLO and INVITE go out at once).
    ///
    /// Every address of the target is tried as ``HappyEyeballsStateMachine`` says (IPv6 first, the
    /// families interleaved, 250 ms between attempts); the first to connect is the connection.
    ///
    /// - Parameters:
    ///   - target: the peer's addresses, or its host (an address, or a name for the system resolver) and port.
    ///   - localPeer: this side's identity.
    ///   - invitation: the expected peer, the context and the timeout.
    ///   - configuration: limits and timers.
    ///   - group: the event loops to run on.
    ///   - delegate: receives the connection's events.
    /// - Returns: the connection, handshake under way; await ``Connection/established``.
    /// - Throws: when no TCP connection can be made.
    package static func dial(
        _ target: DialTarget,
        localPeer: PeerID,
        invitation: ConnectionStateMachine.Invitation,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        delegate: any ConnectionDelegate
    ) async throws -> Connection {
        try await dial(
            target,
            localPeer: localPeer,
            role: .inviter(invitation),
            timeout: invitation.timeout,
            configuration: configuration,
            group: group,
            delegate: delegate
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
    ///   - delegate: receives the connection's events.
    /// - Returns: the connection, handshake under way; await ``Connection/established``.
    /// - Throws: when the TCP connection cannot be made.
    package static func resume(
        host: String,
        port: Int,
        localPeer: PeerID,
        resumption: ConnectionStateMachine.Resumption,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        delegate: any ConnectionDelegate
    ) async throws -> Connection {
        try await dial(
            DialTarget(host: host, port: port),
            localPeer: localPeer,
            role: .resumer(resumption),
            timeout: resumption.timeout,
            configuration: configuration,
            group: group,
            delegate: delegate
        )
    }

    private static func dial(
        _ target: DialTarget,
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        timeout: TimeAmount,
        configuration: ConnectionConfiguration,
        group: any EventLoopGroup,
        delegate: any ConnectionDelegate
    ) async throws -> Connection {
        let connectTimeout = min(timeout, .seconds(10))
        let resolved = await target.resolve()
        guard !resolved.isEmpty else {
            throw HappyEyeballsConnector.AttemptsFailed(attempts: [(target.host, "the host name has no address")])
        }
        let (family, localAddress) = try dialFamily(of: configuration)
        let addresses = resolved.filter { address in
            family == .any || (address.protocol == .inet6) == (family == .ipv6)
        }
        guard !addresses.isEmpty else {
            let found = resolved.compactMap { Platform.addressText($0) }.joined(separator: ", ")
            let wanted = family == .ipv6 ? "IPv6" : "IPv4"
            throw HappyEyeballsConnector.AttemptsFailed(attempts: [(target.host, "no \(wanted) address among \(found)")]
            )
        }
        let eventLoop = group.next()
        // Reading stays off until the winner has its handler: bytes read before would be lost. The handler goes in on
        // the event loop as the winner connects, not after a hop through the caller's task: with the cooperative pool
        // busy, that hop took seconds, during which the handshake did not begin and the listener's timeout ran.
        return try await HappyEyeballsConnector.connect(to: addresses, on: eventLoop) { address in
            var bootstrap = ClientBootstrap(group: eventLoop)
                .connectTimeout(connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelOption(.writeBufferWaterMark, value: .init(low: 1 << 20, high: 4 << 20))
                .channelOption(.recvAllocator, value: ConnectionConfiguration.receiveAllocator)
                .channelOption(.autoRead, value: false)
            if let localAddress { bootstrap = bootstrap.bind(to: localAddress) }
            return bootstrap.connect(to: address)
        }.flatMapThrowing { channel in
            do {
                let connection = try ConnectionHandler.install(
                    on: channel,
                    localPeer: localPeer,
                    role: role,
                    configuration: configuration,
                    delegate: delegate
                )
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return connection
            } catch {
                channel.close(promise: nil)
                throw error
            }
        }.get()
    }

    /// The family to dial and the local address to bind, from the configuration: a local address's own family
    /// wins over ``ConnectionConfiguration/dialFamily`` `any`, and contradicting it is an error.
    private static func dialFamily(
        of configuration: ConnectionConfiguration
    ) throws -> (AddressFamily, SocketAddress?) {
        guard let text = configuration.localAddress else { return (configuration.dialFamily, nil) }
        let local: SocketAddress
        do {
            local = try SocketAddress(ipAddress: text, port: 0)
        } catch {
            throw HappyEyeballsConnector.AttemptsFailed(attempts: [(text, "not an IP address to bind to")])
        }
        let family: AddressFamily = local.protocol == .inet6 ? .ipv6 : .ipv4
        guard configuration.dialFamily == .any || configuration.dialFamily == family else {
            throw HappyEyeballsConnector.AttemptsFailed(
                attempts: [(text, "the local address is \(family), the dial \(configuration.dialFamily) only")]
            )
        }
        return (family, local)
    }
}
