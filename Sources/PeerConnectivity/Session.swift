import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// A group of connected peers that exchange messages, as MPC's `MCSession`.
///
/// Peers join by invitation (``Browser/invitePeer(_:to:withContext:timeout:)``, or
/// ``connectPeer(host:port:withContext:timeout:)`` without discovery) or by accepting one
/// (``Invitation/accept(into:)``). What happens arrives in order on ``events``:
///
/// ```swift
/// let session = Session(peer: me)
/// Task {
///     for await event in session.events {
///         switch event {
///         case .peerStateChanged(let peer, let state, let reason): print(peer, state, reason ?? "")
///         case .dataReceived(let data, let peer, _): print("\(data.count) bytes from \(peer)")
///         }
///     }
/// }
/// try await session.send(Data("hello".utf8), toPeers: session.connectedPeers, mode: .reliable)
/// ```
///
/// Dropping the last reference to a session disconnects it and ends ``events``.
public final class Session: Sendable {
    /// This side's identity.
    public let peer: PeerID
    /// The limits and timers in force.
    public let configuration: Configuration
    /// Whether the session encrypts its connections (see ``EncryptionPreference``).
    public let encryptionPreference: EncryptionPreference
    /// The identity the session proves on encrypted connections: the one it was given, or an
    /// ephemeral one made for a plain ``PeerID`` (whose id is then not self-certifying).
    public let securityIdentity: SecurityIdentity
    /// Peers' certificates waiting for a decision, with ``CertificatePolicy/ask(timeout:)`` (one consumer).
    public let certificateRequests: AsyncStream<CertificateRequest>
    /// Everything that happens in the session, in order, for any number of iterators (see ``Events``).
    public let events: Events

    let runtime: SessionRuntime
    let delegateAdapter = SessionDelegateAdapter()

    /// Makes a session.
    ///
    /// Encrypted connections (see ``EncryptionPreference``) prove `securityIdentity`; without one the
    /// session makes an ephemeral identity, so it can still encrypt, but its plain `peer` id is not
    /// bound to a key (anyone may claim it; pin keys with ``CertificatePolicy/trustOnFirstUse(_:)``).
    ///
    /// - Parameters:
    ///   - peer: this side's identity. **Precondition:** when `securityIdentity` is given, `peer` is
    ///     its ``SecurityIdentity/peer``; a key-derived `peer` needs its identity unless encryption is `.none`.
    ///   - securityIdentity: the key and certificate to prove on encrypted connections.
    ///   - encryptionPreference: `.required` by default, as MPC's: a peer that refuses encryption is
    ///     refused. Plain only when asked for by name (`.none`, or `.optional` against a peer that says none).
    ///   - configuration: limits, timers and the certificate policy.
    public init(
        peer: PeerID,
        securityIdentity: SecurityIdentity? = nil,
        encryptionPreference: EncryptionPreference = .default,
        configuration: Configuration = .default
    ) {
        let identity = Self.identity(for: peer, given: securityIdentity, preference: encryptionPreference)
        let (requests, continuation) = AsyncStream.makeStream(of: CertificateRequest.self)
        self.peer = peer
        self.configuration = configuration
        self.encryptionPreference = encryptionPreference
        self.securityIdentity = identity
        self.certificateRequests = requests
        let security = SecuritySetup.make(
            identity: identity,
            preference: encryptionPreference,
            policy: configuration.certificatePolicy,
            requests: continuation,
            eventLoop: PeerEventLoop.loop(for: peer, in: configuration.ioGroup)
        )
        self.runtime = SessionRuntime(peer: peer, configuration: configuration, security: security)
        self.events = Events(runtime: runtime)
    }

    /// Makes a session for an identity's peer.
    ///
    /// - Parameters:
    ///   - identity: the peer and the key it proves.
    ///   - encryptionPreference: `.required` by default.
    ///   - configuration: limits, timers and the certificate policy.
    public convenience init(
        identity: SecurityIdentity,
        encryptionPreference: EncryptionPreference = .default,
        configuration: Configuration = .default
    ) {
        self.init(
            peer: identity.peer,
            securityIdentity: identity,
            encryptionPreference: encryptionPreference,
            configuration: configuration
        )
    }

    /// The identity to use: the one given (checked against `peer`), or an ephemeral one.
    static func identity(
        for peer: PeerID,
        given: SecurityIdentity?,
        preference: EncryptionPreference
    ) -> SecurityIdentity {
        if let given {
            precondition(given.peer == peer, "the security identity belongs to \(given.peer), not \(peer)")
            return given
        }
        precondition(
            preference == .none || !SecurityIdentity.isKeyDerived(peer.id),
            "\(peer) has a key-derived id: pass its SecurityIdentity to encrypt"
        )
        do {
            return try SecurityIdentity(ephemeralFor: peer)
        } catch {
            preconditionFailure("cannot make an ephemeral identity for \(peer): \(error)")
        }
    }

    /// How the connection to a peer is secured: encrypted or not, its certificate, the pairing code.
    ///
    /// - Parameter peer: a connected peer.
    /// - Returns: the connection's security, or `nil` when the peer is not connected.
    public func securityInfo(for peer: PeerID) -> PeerSecurityInfo? {
        (try? runtime.connection(to: peer))?.securityInfo
    }

    /// What the session's unreliable path has done so far: datagrams sent, those dropped on this host
    /// because the socket's buffer was full, those received and those dropped on arrival.
    public var datagramStatistics: DatagramStatistics {
        let counts = runtime.datagrams.statistics
        return DatagramStatistics(
            sent: counts.sent,
            notSentQueueFull: counts.droppedFull,
            sentOnConnection: counts.sentOnConnection,
            received: counts.received,
            rejected: counts.rejected,
            droppedUnread: counts.droppedUnread
        )
    }

    /// How the link to a peer is doing: its TCP connection as the kernel sees it (round trip, congestion
    /// window, retransmissions, bytes) and the session's unreliable path.
    ///
    /// - Parameter peer: a connected peer.
    /// - Returns: the report, or `nil` when the peer is not connected or the system does not tell
    ///   (`TCP_INFO` is read on Linux).
    public func linkReport(for peer: PeerID) async -> LinkReport? {
        guard let connection = try? runtime.connection(to: peer),
            let info = await TCPLinkInfo.read(from: connection.channel)
        else { return nil }
        func microseconds(_ value: UInt32) -> Duration { .microseconds(Int64(value)) }
        return LinkReport(
            smoothedRoundTrip: microseconds(info.roundTripMicroseconds),
            roundTripVariation: microseconds(info.roundTripVariationMicroseconds),
            minimumRoundTrip: info.minimumRoundTripMicroseconds.map(microseconds),
            retransmittedSegments: Int(info.retransmittedSegments),
            congestionWindowSegments: Int(info.congestionWindowSegments),
            segmentSize: Int(info.segmentSize),
            bytesInFlight: Int(info.unacknowledgedSegments) * Int(info.segmentSize),
            notSentBytes: Int(info.notSentBytes),
            deliveryRateBytesPerSecond: info.deliveryRateBytesPerSecond.map(Double.init),
            bytesSent: info.bytesSent,
            bytesRetransmitted: info.bytesRetransmitted,
            bytesReceived: info.bytesReceived,
            datagrams: datagramStatistics,
            congestionControl: await TCPCongestionControl.read(from: connection.channel)
        )
    }

    /// Where the connection to a peer runs: both sides' addresses and ports.
    ///
    /// - Parameter peer: a connected peer.
    /// - Returns: the endpoints, or `nil` when the peer is not connected.
    public func endpoints(of peer: PeerID) -> ConnectionEndpoints? {
        guard let endpoints = (try? runtime.connection(to: peer))?.endpoints else { return nil }
        return ConnectionEndpoints(
            localAddress: endpoints.local.host,
            localPort: endpoints.local.port,
            remoteAddress: endpoints.remote.host,
            remotePort: endpoints.remote.port
        )
    }

    deinit {
        runtime.shutdown()
    }

    /// The executor of the event loop that does this session's I/O (and its advertiser's, for the same
    /// ``PeerID``).
    ///
    /// A task that prefers it reads ``events`` and sends without a hop between threads: the lowest
    /// round-trip latency. Keep the work per event short there, since a task that blocks it stalls
    /// the session's I/O; everything else is best left on the default executor.
    ///
    /// ```swift
    /// Task(executorPreference: session.taskExecutor) {
    ///     for await case .dataReceived(let data, let peer, _) in session.events {
    ///         try? await session.send(data, toPeers: [peer])   // an echo, on the I/O thread
    ///     }
    /// }
    /// ```
    public var taskExecutor: any TaskExecutor {
        EventLoopTaskExecutor(eventLoop: runtime.eventLoop)
    }

    /// The peers connected now.
    public var connectedPeers: [PeerID] {
        runtime.peers(in: .connected)
    }

    /// The state of one peer in this session.
    ///
    /// - Parameter peer: the peer.
    /// - Returns: its state; `notConnected` for a peer the session does not hold.
    public func state(of peer: PeerID) -> PeerState {
        runtime.state(of: peer)
    }

    /// Sends a message to connected peers.
    ///
    /// Reliable, up to 1 MiB: returns once the message is queued for every target, in order after every
    /// message sent before it; suspends first while a peer's outbound queue is full. With
    /// ``Configuration/reconnection``, a target that is reconnecting counts as connected: the message
    /// is kept and goes out when the link is back; `send` also suspends while the messages kept for a
    /// peer (not yet confirmed by it) reach ``Reconnection/retainedBytesLimit``.
    ///
    /// Reliable, over 1 MiB (a large message): sent in chunks, paced with streams and resources, so that
    /// the messages sent after it are not held up behind it; `send` returns once every target has
    /// received it whole. Large messages reach a peer whole and in the order their `send`s began (they go
    /// one at a time per peer), after every message sent before them; but a message sent
    /// after a large one may arrive before it. A large message is not resumed by reconnection: the
    /// target must be connected, and if the link drops before the peer has the message, `send` throws
    /// ``SessionError/peerNotConnected(_:reason:)`` (the message may or may not have arrived). Cancelling
    /// the task that sends a large message ends it wherever it is (waiting for its turn behind another large
    /// message to the same peer, sending its chunks, or waiting for the peer to confirm it): the peer drops
    /// what it gathered and delivers nothing (unless it had the message whole already: cancelled while
    /// waiting for the confirmation, it may have arrived), and the next large message to that peer may go.
    /// A peer that is gathering as many large messages as its memory budget allows refuses more
    /// (``Configuration/largeMessageBudget``): `send` then throws
    /// ``SessionError/messageNotDelivered(_:detail:)`` saying it was busy, and may be tried again later.
    ///
    /// Unreliable: returns once the datagram is handed to the socket, or dropped (see ``SendMode/unreliable``).
    ///
    /// `send` runs where its caller runs (`nonisolated(nonsending)`): on the caller's actor, or on the event
    /// loop a task prefers (then a message up to 1 MiB is written before `send` returns, with no hop). Up to
    /// 1 MiB, the message is copied there; a larger one is cut into chunks off the caller's actor.
    ///
    /// - Parameters:
    ///   - data: the message, at most ``Configuration/maximumMessageLength`` bytes (reliable) or
    ///     65,000 bytes (unreliable).
    ///   - peers: the targets; each must be connected.
    ///   - mode: ``SendMode/reliable`` or ``SendMode/unreliable``.
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` naming a target that is not connected,
    ///   ``SessionError/messageTooLarge(size:limit:)``, ``SessionError/messageTooLargeForPeer(_:size:limit:)``
    ///   (a target accepts less; nothing is sent to any target), ``SessionError/messageNotDelivered(_:detail:)``
    ///   (a large message the peer refused or cancelled), or ``SessionError/noPeers``; `CancellationError`
    ///   when the task is cancelled while a large message is under way.
    public nonisolated(nonsending) func send(
        _ data: Data,
        toPeers peers: [PeerID],
        mode: SendMode = .reliable
    ) async throws {
        let limit =
            mode == .unreliable
            ? min(WireProtocol.maximumUnreliableMessageLength, configuration.maximumMessageLength)
            : configuration.maximumMessageLength
        guard data.count <= limit else {
            throw SessionError.messageTooLarge(size: data.count, limit: limit)
        }
        guard !peers.isEmpty else { throw SessionError.noPeers }
        if mode == .unreliable {
            try await sendUnreliable(data, to: peers)
            return
        }
        if data.count > WireProtocol.inlineMessageLimit {
            try await sendLarge(data, to: peers)
            return
        }
        if configuration.reconnection != nil {
            // One target's limit is checked with its send; several are checked before any is sent to.
            if peers.count > 1 { try runtime.checkMessageLength(data.count, to: peers) }
            let frame = runtime.dataFrame(data)
            for peer in peers {
                try await runtime.sendResumable(frame, to: peer)
            }
            return
        }
        if peers.count == 1 {  // the common case needs no array of connections
            let connection = try runtime.connection(to: peers[0], carrying: data.count)
            try await Self.send(runtime.dataFrame(data), on: connection, to: peers[0])
            return
        }
        let connections = try runtime.connections(to: peers, carrying: data.count)
        let frame = runtime.dataFrame(data)
        for (peer, connection) in zip(peers, connections) {
            try await Self.send(frame, on: connection, to: peer)
        }
    }

    /// One datagram per target; on the connection for a target whose UDP endpoint is not known yet.
    private func sendUnreliable(_ data: Data, to peers: [PeerID]) async throws {
        let connections = try runtime.connections(to: peers, carrying: data.count)
        for (peer, connection) in zip(peers, connections) where !runtime.datagrams.send(data, on: connection) {
            let frame = runtime.dataFrame(data)
            if configuration.reconnection != nil {
                // Every DATA frame of a link is numbered, these too.
                try await runtime.sendResumable(frame, to: peer)
            } else {
                try await Self.send(frame, on: connection, to: peer)
            }
        }
    }

    private nonisolated(nonsending) static func send(
        _ frame: EncodedFrame,
        on connection: Connection,
        to peer: PeerID
    ) async throws {
        do {
            try await connection.send(frame)
        } catch let error as ConnectionClosedError {
            throw SessionError.peerNotConnected(peer, reason: error.reason)
        }
    }

    /// Invites the peer listening at `host:port` (its ``Advertiser``), without DNS-SD: for networks
    /// where multicast does not pass, as MPC's nearbyConnectionData.
    ///
    /// The peer shows as `connecting` once it has said who it is, then `connected` when it accepts.
    ///
    /// - Parameters:
    ///   - host: the peer's host name or address.
    ///   - port: its advertiser's port (``Advertiser/port``).
    ///   - context: data the peer sees with the invitation, at most 64 KiB.
    ///   - timeout: how long to wait for the answer.
    /// - Returns: the peer, connected.
    /// - Throws: ``InvitationError`` when the peer declines, does not answer in time or cannot be reached;
    ///   ``SessionError`` when the session is full or already holds the peer.
    @discardableResult
    public func connectPeer(
        host: String,
        port: Int,
        withContext context: Data? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> PeerID {
        try await runtime.invite(expectedPeer: nil, host: host, port: port, context: context, timeout: timeout)
    }

    /// Closes the connection to `peer` at once, without goodbye, as a crash or a cut cable would: for
    /// tests of what happens when a link drops.
    ///
    /// - Parameter peer: the peer whose connection to cut.
    package func abortConnection(to peer: PeerID) {
        runtime.abortConnection(to: peer)
    }

    /// Silences the connection to `peer` for good without closing it, as when a cable is cut: nothing
    /// more passes either way, until the liveness timeout closes it (tests).
    ///
    /// - Parameter peer: the peer whose connection to silence.
    package func silenceConnection(to peer: PeerID) {
        runtime.silenceConnection(to: peer)
    }

    /// How many reliable messages to `peer` are kept until the peer acknowledges them (reconnection);
    /// nil without a link to it (tests).
    ///
    /// - Parameter peer: a peer.
    package func unconfirmedMessageCount(to peer: PeerID) -> Int? {
        runtime.peers.withLock { $0[peer]?.link?.ledger.unconfirmedCount }
    }

    /// The port of the session's own listener (mesh members and reconnection dial it), once bound.
    package var memberListenerPort: Int? {
        runtime.mesh.withLock { $0.machine.listenerPort }
    }

    /// Closes the session's own listener, so that no member can connect nor resume through it (tests).
    package func closeMemberListener() {
        runtime.stopMesh()
    }

    /// Leaves the session: says goodbye to every peer and closes the connections.
    ///
    /// Each peer is reported `notConnected` with `DisconnectReason.localDisconnect` here and
    /// `DisconnectReason.peerDisconnected` on its side. Returns once every connection is closed: over a
    /// connection without TLS, once the peer has read the goodbye and closed its end too (at once for a
    /// peer that works, at most 5 s for one that does not), so that what was sent before the goodbye is
    /// not cut off by a reset. The session can be used again afterwards.
    public func disconnect() async {
        await runtime.disconnectAll()
    }
}
