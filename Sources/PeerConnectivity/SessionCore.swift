import Foundation
import NIOCore
import NIOFoundationCompat
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The state behind a ``Session``: which peers it holds over which connections, and the event stream.
///
/// It is the delegate of every connection in the session, so its callbacks run on event loops;
/// the public methods run on any thread. One `Mutex` guards the peer table; events are yielded
/// while it is held so that their order matches the order of the changes.
final class SessionCore: ConnectionEventHandler, Sendable {
    struct Entry {
        var state: PeerState
        /// `nil` while an invitation is being dialled.
        var connection: Connection?
        /// Whether this side invited the peer (the connection is, or will be, our dial).
        var invitedByUs = false
        /// Callers waiting until the peer is connected (or gone), whichever connection wins.
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// The peer closed our connection as a duplicate: the one that replaces it is on its way.
        var awaitingReplacement = false
        /// With reconnection on, once connected: the link's secrets, numbering and kept messages.
        var link: ResumableLink?
    }

    /// How long a peer whose connection was closed as a duplicate stays `connecting`, waiting for
    /// the connection that replaces it, before it counts as gone.
    static let replacementGracePeriod = Duration.seconds(5)

    /// What `accept` does with an invitation from a peer the session already holds.
    private enum Admission {
        /// The peer is new here: it joins as `connecting`.
        case admitted
        /// Both sides invited each other at once and the peer's invitation wins the tie-break: it
        /// replaces our own dial, which is closed.
        case supersedes(Connection?)
        /// Our own invitation wins the tie-break: this one is declined, and the peer joins through ours.
        case duplicate
    }

    let peer: PeerID
    let configuration: Session.Configuration
    let connectionConfiguration: ConnectionConfiguration
    /// The event loop of the session's I/O (``PeerEventLoop``): its dials, listener, datagrams, timers and
    /// ``Session/taskExecutor``.
    let eventLoop: any EventLoop
    /// The session's own listener and what it knows of the other members' (see `SessionCore+Mesh.swift`).
    let mesh = Mutex(MeshState())
    /// The session's events, in order, for every subscriber; ``Session/Events`` reads them.
    let events = EventHub<SessionEvent>()
    let peers = Mutex([PeerID: Entry]())
    /// Numbers the drops of links being re-established (reconnection).
    let reconnectGenerations = Atomic<Int>(0)
    private let shutDown = Atomic<Bool>(false)
    /// Whether the session was released.
    var isShutDown: Bool { shutDown.load(ordering: .relaxed) }
    /// Direct dials refused once the peer said who it is (already in the session, or the session
    /// filled up meanwhile), so that `invite` throws the same ``SessionError`` as a browser invite.
    private let refusals = Mutex([ObjectIdentifier: Refusal]())

    /// Why this side closed one of its own dials once the peer said who it is.
    private enum Refusal {
        /// The session cannot take the peer: `invite` throws this.
        case error(SessionError)
        /// The peer invited this side at the same moment and its invitation won the tie-break:
        /// `invite` waits for the peer to be connected through that one.
        case lostTieBreak(PeerID)
    }
    /// The session's UDP socket for unreliable messages.
    let datagrams = SessionDatagrams()
    /// Buffers that large messages are copied into on their way out, used again once written.
    let sendBuffers = SendBufferPool()
    /// The receiving ends of the channels peers opened, by connection and channel number.
    let transfers = Mutex([TransferKey: any InboundTransfer]())
    /// The resources in flight both ways, for ``SessionModel``.
    let resourcesInFlight = TransferRegistry()
    /// The session's places for resources arriving at once (``Session/Configuration/maximumIncomingResources``).
    let incomingResources: IncomingResourceSlots
    private let readingPaused = Atomic<Bool>(false)

    /// The session's encryption preference.
    let encryptionPreference: EncryptionPreference

    init(peer: PeerID, configuration: Session.Configuration, security: ConnectionSecurity?) {
        self.peer = peer
        self.configuration = configuration
        self.eventLoop = PeerEventLoop.loop(for: peer, in: configuration.ioGroup)
        self.encryptionPreference = security?.preference ?? .none
        self.incomingResources = IncomingResourceSlots(limit: configuration.maximumIncomingResources)
        self.connectionConfiguration = ConnectionConfiguration(
            maximumMessageLength: configuration.maximumMessageLength,
            handshakeTimeout: .seconds(5),
            keepaliveInterval: TimeAmount(configuration.keepaliveInterval),
            livenessTimeout: TimeAmount(configuration.livenessTimeout),
            logger: configuration.logger,
            security: security,
            encryptedBefore: configuration.certificatePolicy.hasSeenEncrypted
        )
        datagrams.start(
            on: eventLoop,
            ports: configuration.datagramPorts
        ) {
            [weak self] data, peer in
            self?.deliverUnreliable(data, from: peer) ?? false
        }
        if configuration.joinsMesh || configuration.reconnection != nil {
            startMesh()
        }
    }

    // MARK: - Queries

    func peers(in state: PeerState) -> [PeerID] {
        peers.withLock { table in table.filter { $0.value.state == state }.map(\.key) }
    }

    func state(of peer: PeerID) -> PeerState {
        peers.withLock { $0[peer]?.state ?? .notConnected }
    }

    /// The state of every peer the session holds.
    var peerStates: [PeerID: PeerState] {
        peers.withLock { table in table.mapValues(\.state) }
    }

    /// A new subscriber of ``events`` that takes only peer state changes, and the states of the peers
    /// the session holds, together: state changes are yielded under the same lock.
    ///
    /// - Returns: the subscriber's id (it claims no early events) and the states.
    func subscribeToPeerStates() -> (id: Int, states: [PeerID: PeerState]) {
        peers.withLock { table in
            let id = events.subscribe(claimsEarlyEvents: false) { event in
                if case .peerStateChanged = event { return true }
                return false
            }
            return (id, table.mapValues(\.state))
        }
    }

    func connection(to target: PeerID) throws(SessionError) -> Connection {
        try peers.withLock { table throws(SessionError) in try Self.connectedConnection(to: target, in: table) }
    }

    func connections(to targets: [PeerID]) throws(SessionError) -> [Connection] {
        try peers.withLock { table throws(SessionError) in
            try targets.map { target throws(SessionError) in try Self.connectedConnection(to: target, in: table) }
        }
    }

    private static func connectedConnection(to target: PeerID, in table: [PeerID: Entry]) throws(SessionError)
        -> Connection
    {
        guard let entry = table[target], entry.state == .connected, let connection = entry.connection else {
            throw SessionError.peerNotConnected(target)
        }
        return connection
    }

    // MARK: - Joining

    /// Holds a place for `peer` as `connecting`, or throws when the session is full or already holds it.
    private func reserve(_ peer: PeerID, connection: Connection?, invitedByUs: Bool) throws(SessionError) {
        try peers.withLock { table throws(SessionError) in
            if table[peer] != nil { throw SessionError.alreadyInSession(peer) }
            try admit(peer, connection: connection, invitedByUs: invitedByUs, in: &table)
        }
    }

    /// Adds `peer` as `connecting` if there is room (under the lock).
    private func admit(
        _ peer: PeerID,
        connection: Connection?,
        invitedByUs: Bool,
        in table: inout [PeerID: Entry]
    ) throws(SessionError) {
        if table.count >= configuration.maximumPeers {
            throw SessionError.sessionFull(limit: configuration.maximumPeers)
        }
        table[peer] = Entry(state: .connecting, connection: connection, invitedByUs: invitedByUs)
        events.yield(.peerStateChanged(peer, .connecting, reason: nil))
    }

    /// Removes `peer` if it is held over `connection` (or over no connection yet) and reports it `notConnected`.
    private func release(_ peer: PeerID, connection: Connection?, reason: DisconnectReason) {
        let (waiters, sendWaiters) = peers.withLock {
            table -> ([CheckedContinuation<Void, any Error>], [CheckedContinuation<Void, any Error>]) in
            guard let entry = table[peer], entry.connection == nil || entry.connection === connection else {
                return ([], [])
            }
            table[peer] = nil
            events.yield(.peerStateChanged(peer, .notConnected, reason: reason))
            return (entry.waiters, entry.link?.sendWaiters ?? [])
        }
        for waiter in waiters { waiter.resume(throwing: InvitationError.failed(peer: peer, reason: reason)) }
        for waiter in sendWaiters { waiter.resume(throwing: SessionError.peerNotConnected(peer, reason: reason)) }
    }

    /// Waits until `peer` is connected, over whichever connection; throws if it leaves the session first.
    private func waitUntilConnected(_ peer: PeerID) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let verdict = peers.withLock { table -> Result<Void, any Error>? in
                guard table[peer] != nil else {
                    return .failure(InvitationError.failed(peer: peer, reason: .connectionLost))
                }
                if table[peer]?.state == .connected { return .success(()) }
                table[peer]?.waiters.append(continuation)
                return nil
            }
            if let verdict { continuation.resume(with: verdict) }
        }
    }

    /// Puts `connection` in place of the one holding `peer` (which the caller closes); a peer that was
    /// connected shows as `connecting` until the new connection is established.
    ///
    /// - Returns: the connection replaced.
    private func supersede(
        _ peer: PeerID,
        with connection: Connection,
        invitedByUs: Bool,
        in table: inout [PeerID: Entry]
    ) -> Connection? {
        let replaced = table[peer]?.connection
        table[peer]?.connection = connection
        table[peer]?.invitedByUs = invitedByUs
        if table[peer]?.state == .connected {
            table[peer]?.state = .connecting
            events.yield(.peerStateChanged(peer, .connecting, reason: nil))
        }
        return replaced
    }

    /// The peer closed the connection holding it as a duplicate: it invited this side at the same
    /// moment and keeps the other connection. The peer stays `connecting` until that one arrives, or
    /// is released after ``replacementGracePeriod``.
    ///
    /// - Returns: `false` if the connection did not hold the peer.
    private func awaitReplacement(of peer: PeerID, closed connection: Connection) -> Bool {
        let held = peers.withLock { table -> Bool in
            guard let entry = table[peer], entry.connection === connection else { return false }
            table[peer]?.connection = nil
            table[peer]?.awaitingReplacement = true
            if entry.state == .connected {
                table[peer]?.state = .connecting
                events.yield(.peerStateChanged(peer, .connecting, reason: nil))
            }
            return true
        }
        guard held else { return false }
        connection.eventLoop.scheduleTask(in: TimeAmount(Self.replacementGracePeriod)) { [weak self] in
            self?.giveUpReplacement(of: peer)
        }
        return true
    }

    private func giveUpReplacement(of peer: PeerID) {
        let stillWaiting = peers.withLock { table in
            table[peer]?.awaitingReplacement == true && table[peer]?.connection == nil
        }
        if stillWaiting {
            release(peer, connection: nil, reason: .duplicate.with(detail: "the replacing connection never came"))
        }
    }

    /// Whether an invitation from `inviter` beats one from `invitee` when two peers invite each
    /// other at once: the lower peer id wins, the same on both sides.
    static func winsTieBreak(inviter: PeerID, over invitee: PeerID) -> Bool {
        inviter.id.uuidString < invitee.id.uuidString
    }

    func invite(
        expectedPeer: PeerID?,
        host: String,
        port: Int,
        context: Data?,
        timeout: Duration
    ) async throws -> PeerID {
        let context = context ?? Data()
        guard context.count <= WireProtocol.maximumContextLength else {
            throw InvitationError.failed(
                peer: expectedPeer,
                reason: .protocolViolation.with(
                    detail: "context of \(context.count) bytes exceeds \(WireProtocol.maximumContextLength)"
                )
            )
        }
        if let expectedPeer {
            try reserve(expectedPeer, connection: nil, invitedByUs: true)
        } else if peers.withLock({ $0.count }) >= configuration.maximumPeers {
            throw SessionError.sessionFull(limit: configuration.maximumPeers)
        }
        let invitation = ConnectionStateMachine.Invitation(
            expectedPeer: expectedPeer,
            context: ByteBuffer(bytes: context),
            timeout: TimeAmount(timeout)
        )
        let connection: Connection
        do {
            connection = try await ConnectionDialer.dial(
                host: host,
                port: port,
                localPeer: peer,
                invitation: invitation,
                configuration: connectionConfiguration,
                group: eventLoop,
                handler: self
            )
        } catch {
            let reason = DisconnectReason.connectionFailed.with(detail: "\(host):\(port): \(error)")
            if let expectedPeer { release(expectedPeer, connection: nil, reason: reason) }
            throw InvitationError.failed(peer: expectedPeer, reason: reason)
        }
        if let expectedPeer, !attach(connection, to: expectedPeer) {
            connection.close(.localDisconnect.with(detail: "the peer joined through its own invitation"))
            try await waitUntilConnected(expectedPeer)
            return expectedPeer
        }
        do {
            return try await withTaskCancellationHandler {
                try await connection.established.get()
            } onCancel: {
                connection.close(.localDisconnect.with(detail: "the invitation was cancelled"))
            }
        } catch let error as ConnectionClosedError {
            switch refusals.withLock({ $0.removeValue(forKey: ObjectIdentifier(connection)) }) {
            case .error(let error): throw error
            case .lostTieBreak(let peer):
                try await waitUntilConnected(peer)
                return peer
            case nil: break
            }
            if let peer = error.peer ?? expectedPeer, heldOverAnotherConnection(peer, than: connection) {
                // Both invited each other and the peer's invitation won: it joins through that one.
                try await waitUntilConnected(peer)
                return peer
            }
            if let peer = error.peer ?? expectedPeer { release(peer, connection: connection, reason: error.reason) }
            throw InvitationError.failed(peer: error.peer ?? expectedPeer, reason: error.reason)
        }
    }

    /// Whether `peer` is held over a connection other than `connection` (its own invitation won).
    private func heldOverAnotherConnection(_ peer: PeerID, than connection: Connection) -> Bool {
        peers.withLock { table in
            guard let held = table[peer]?.connection else { return false }
            return held !== connection
        }
    }

    /// Records the dialled connection of a reserved peer; `false` if the reservation is gone.
    private func attach(_ connection: Connection, to peer: PeerID) -> Bool {
        peers.withLock { table in
            guard let entry = table[peer] else { return false }
            if entry.connection == nil { table[peer]?.connection = connection }
            return table[peer]?.connection === connection
        }
    }

    func accept(_ connection: Connection, from peer: PeerID) async throws {
        let admission = try peers.withLock { table throws(SessionError) -> Admission in
            guard let entry = table[peer] else {
                try admit(peer, connection: connection, invitedByUs: false, in: &table)
                return .admitted
            }
            if entry.awaitingReplacement {
                table[peer]?.connection = connection
                table[peer]?.invitedByUs = false
                table[peer]?.awaitingReplacement = false
                return .admitted
            }
            // We invited the same peer: the invitation of the lower peer id wins, on both sides.
            guard entry.invitedByUs else { throw SessionError.alreadyInSession(peer) }
            guard Self.winsTieBreak(inviter: peer, over: self.peer) else { return .duplicate }
            return .supersedes(supersede(peer, with: connection, invitedByUs: false, in: &table))
        }
        switch admission {
        case .admitted:
            break
        case .supersedes(let ourDial):
            ourDial?.close(.duplicate.with(detail: "the peer's simultaneous invitation won the tie-break"))
        case .duplicate:
            // Left unanswered until ours is through: by then the peer has closed it for ours.
            defer { connection.decline(.duplicate.with(detail: "both invited each other; the other invitation won")) }
            try await waitUntilConnected(peer)
            return
        }
        do {
            try await connection.accept(
                handler: self,
                keepaliveInterval: connectionConfiguration.keepaliveInterval,
                livenessTimeout: connectionConfiguration.livenessTimeout,
                maximumMessageLength: configuration.maximumMessageLength
            )
        } catch let error as ConnectionClosedError {
            if heldOverAnotherConnection(peer, than: connection) {
                // Our own simultaneous invitation won the tie-break meanwhile: the peer joins through it.
                try await waitUntilConnected(peer)
                return
            }
            release(peer, connection: connection, reason: error.reason)
            throw InvitationError.notPending(peer: peer, reason: error.reason)
        }
    }

    // MARK: - Leaving

    func disconnectAll() async {
        let (connections, waiters) = peers.withLock { table -> ([Connection], [CheckedContinuation<Void, any Error>]) in
            var waiters: [CheckedContinuation<Void, any Error>] = []
            for (peer, entry) in table where entry.connection == nil {
                table[peer] = nil
                waiters += entry.waiters + (entry.link?.sendWaiters ?? [])
                var reason = DisconnectReason.localDisconnect
                if var link = entry.link {
                    // A link being re-established: what the peer never confirmed is not delivered.
                    reason = reason.with(unconfirmedMessages: link.ledger.abandon().count)
                }
                events.yield(.peerStateChanged(peer, .notConnected, reason: reason))
            }
            return (table.values.compactMap(\.connection), waiters)
        }
        for waiter in waiters {
            waiter.resume(throwing: InvitationError.failed(peer: nil, reason: .localDisconnect))
        }
        for connection in connections {
            connection.close(.localDisconnect)
        }
        for connection in connections {
            try? await connection.closed.get()
        }
    }

    /// The session was released: close everything and end the event stream.
    func shutdown() {
        shutDown.store(true, ordering: .relaxed)
        let connections = peers.withLock { table in table.values.compactMap(\.connection) }
        for connection in connections {
            connection.close(.localDisconnect)
        }
        datagrams.shutdown()
        stopMesh()
        events.finish()
        resourcesInFlight.changes.finish()
    }

    // MARK: - Receive backpressure

    /// A subscriber took a data event of `count` bytes: resume reading once every subscriber is
    /// below half the limit.
    func consumed(_ count: Int, by subscriber: Int) {
        resumeReadingIfDrained(backlog: events.consume(subscriber, bytes: count))
    }

    /// A subscriber went away: what it had not read no longer holds reading back.
    func unsubscribed(_ subscriber: Int) {
        resumeReadingIfDrained(backlog: events.unsubscribe(subscriber))
    }

    private func resumeReadingIfDrained(backlog: Int) {
        guard backlog <= configuration.receiveBufferLimit / 2,
            readingPaused.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
        else { return }
        let connections = peers.withLock { table in table.values.compactMap(\.connection) }
        for connection in connections {
            connection.resumeReading()
        }
    }

    // MARK: - Connection events (on event loops)

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .message(let message, let peer):
            return received(message, from: peer, on: connection)
        case .identified(let peer):
            identified(peer, on: connection)
        case .invitation(let peer, _, _):
            // Only the session's own listener hands invitations here: members connecting (mesh).
            meshInvitation(connection, from: peer)
        case .established(let peer):
            established(peer, on: connection)
        case .datagramEndpoint(let port, let token, let peer):
            notePeerFrame(from: peer, on: connection)
            datagrams.peerEndpoint(port: port, token: token, on: connection)
        case .datagramKey(let key, _):
            datagrams.peerKey(key, on: connection)
        case .membership(let frame, let peer):
            membership(frame, from: peer, on: connection)
        case .channel(let channelEvent, let peer):
            channel(channelEvent, from: peer, on: connection)
        case .resumeRequested(let peer, let secret, let peerExpects):
            resumeRequested(by: peer, secret: secret, peerExpects: peerExpects, on: connection)
        case .resumed(let peer, let peerExpects):
            resumed(peer, peerExpects: peerExpects, on: connection)
        case .resumeSecret(let secret, let peer):
            resumeSecret(secret, from: peer, on: connection)
        case .acknowledged(let count, let peer):
            acknowledged(count, from: peer, on: connection)
        case .closed(let peer, let reason):
            closed(connection, peer: peer, reason: reason)
        }
        return .more
    }

    private func identified(_ peer: PeerID, on connection: Connection) {
        var replaced: Connection?
        let refusal = peers.withLock { table -> Refusal? in
            guard let entry = table[peer] else {
                do throws(SessionError) {
                    try admit(peer, connection: connection, invitedByUs: true, in: &table)
                    return nil
                } catch {
                    return .error(error)
                }
            }
            if entry.connection === connection { return nil }
            if entry.connection == nil, entry.state == .connecting {
                table[peer]?.connection = connection
                if entry.awaitingReplacement {
                    table[peer]?.invitedByUs = true
                    table[peer]?.awaitingReplacement = false
                }
                return nil
            }
            // The peer invited this side too: the invitation of the lower peer id wins, on both sides.
            guard !entry.invitedByUs else { return .error(.alreadyInSession(peer)) }
            guard Self.winsTieBreak(inviter: self.peer, over: peer) else { return .lostTieBreak(peer) }
            replaced = supersede(peer, with: connection, invitedByUs: true, in: &table)
            return nil
        }
        replaced?.close(.duplicate.with(detail: "a simultaneous invitation won the tie-break"))
        switch refusal {
        case .error(let error):
            refusals.withLock { $0[ObjectIdentifier(connection)] = refusal }
            connection.close(.localDisconnect.with(detail: error.description))
        case .lostTieBreak:
            refusals.withLock { $0[ObjectIdentifier(connection)] = refusal }
            connection.close(.duplicate.with(detail: "the peer's simultaneous invitation won the tie-break"))
        case .none:
            break
        }
    }

    private func established(_ peer: PeerID, on connection: Connection) {
        let ours = peers.withLock { table -> [CheckedContinuation<Void, any Error>]? in
            guard let entry = table[peer], entry.connection === connection || entry.connection == nil else {
                return nil
            }
            let waiters = entry.waiters
            table[peer] = Entry(state: .connected, connection: connection, invitedByUs: entry.invitedByUs)
            if configuration.reconnection != nil {
                // Before the peer shows connected, so it is the first frame after the handshake.
                let link = ResumableLink()
                connection.sendControl(.resumeSecret(link.localSecret))
                table[peer]?.link = link
            }
            events.yield(.peerStateChanged(peer, .connected, reason: nil))
            return waiters
        }
        for waiter in ours ?? [] { waiter.resume() }
        if ours != nil {
            datagrams.established(connection, with: peer)
            meshEstablished(connection)
        } else {
            connection.close(.unexpectedPeer.with(detail: "\(peer) is not expected in this session"))
        }
    }

    private func membership(_ frame: Frame, from peer: PeerID, on connection: Connection) {
        notePeerFrame(from: peer, on: connection)
        if case .sessionListener(let port) = frame {
            learnResumeEndpoint(port: port, on: connection, from: peer)
        }
        meshReceived(frame, on: connection, from: peer)
    }

    /// An unreliable message arrived by UDP: delivered unless the application is too far behind.
    private func deliverUnreliable(_ data: Data, from peer: PeerID) -> Bool {
        guard events.backlog <= configuration.receiveBufferLimit, state(of: peer) == .connected else { return false }
        events.yield(.dataReceived(data, from: peer, mode: .unreliable), bytes: data.count)
        return true
    }

    private func received(_ message: ByteBuffer, from peer: PeerID, on connection: Connection) -> ConnectionReadDemand {
        if configuration.reconnection != nil {
            countReceived(message.readableBytes, from: peer, on: connection)
        }
        let data = Data(buffer: message, byteTransferStrategy: .automatic)
        let backlog = events.yield(.dataReceived(data, from: peer, mode: .reliable), bytes: data.count)
        guard backlog > configuration.receiveBufferLimit else { return .more }
        readingPaused.store(true, ordering: .sequentiallyConsistent)
        // The subscribers may have drained the backlog before they could see the flag: check again.
        if events.backlog <= configuration.receiveBufferLimit / 2 {
            readingPaused.store(false, ordering: .sequentiallyConsistent)
            return .more
        }
        return .pause
    }

    private func closed(_ connection: Connection, peer: PeerID?, reason: DisconnectReason) {
        let ended = transfers.withLock { table -> [any InboundTransfer] in
            let keys = table.keys.filter { $0.connection == ObjectIdentifier(connection) }
            return keys.compactMap { table.removeValue(forKey: $0) }
        }
        for transfer in ended {
            transfer.failed(.connectionClosed(reason, peer: peer, name: transfer.name))
        }
        datagrams.closed(connection)
        meshClosed(connection)
        guard let peer else { return }
        if reason == .duplicate, awaitReplacement(of: peer, closed: connection) { return }
        if reconnectIfResumable(peer, closed: connection, reason: reason) { return }
        release(peer, connection: connection, reason: reason)
    }
}

/// Identifies a channel within a session: its connection and its number.
struct TransferKey: Hashable {
    let connection: ObjectIdentifier
    let channel: UInt32

    init(_ connection: Connection, _ channel: UInt32) {
        self.connection = ObjectIdentifier(connection)
        self.channel = channel
    }
}
