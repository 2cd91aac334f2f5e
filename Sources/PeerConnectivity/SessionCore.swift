import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The state behind a ``Session``: which peers it holds over which connections, and the event stream.
///
/// It is the delegate of every connection in the session, so its callbacks run on event loops;
/// the public methods run on any thread. One `Mutex` guards the peer table; events are yielded
/// while it is held so that their order matches the order of the changes.
final class SessionCore: ConnectionDelegate, Sendable {
    private struct Entry {
        var state: PeerState
        /// `nil` while an invitation is being dialled.
        var connection: Connection?
    }

    let peer: PeerID
    let configuration: Session.Configuration
    private let connectionConfiguration: ConnectionConfiguration
    /// The session's events, in order, for every subscriber; ``Session/Events`` reads them.
    let events = EventHub<SessionEvent>()
    private let peers = Mutex([PeerID: Entry]())
    /// Direct dials refused once the peer said who it is (already in the session, or the session
    /// filled up meanwhile), so that `invite` throws the same ``SessionError`` as a browser invite.
    private let refusals = Mutex([ObjectIdentifier: SessionError]())
    /// The session's UDP socket for unreliable messages.
    let datagrams = SessionDatagrams()
    /// The receiving ends of the channels peers opened, by connection and channel number.
    private let transfers = Mutex([TransferKey: any InboundTransfer]())
    /// The resources in flight both ways, for ``SessionModel``.
    let resourcesInFlight = TransferRegistry()
    private let readingPaused = Atomic<Bool>(false)

    init(peer: PeerID, configuration: Session.Configuration) {
        self.peer = peer
        self.configuration = configuration
        self.connectionConfiguration = ConnectionConfiguration(
            maximumMessageLength: configuration.maximumMessageLength,
            handshakeTimeout: .seconds(5),
            keepaliveInterval: TimeAmount(configuration.keepaliveInterval),
            livenessTimeout: TimeAmount(configuration.livenessTimeout),
            logger: configuration.logger
        )
        datagrams.start { [weak self] data, peer in
            self?.deliverUnreliable(data, from: peer) ?? false
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
    private func reserve(_ peer: PeerID, connection: Connection?) throws(SessionError) {
        try peers.withLock { table throws(SessionError) in
            if table[peer] != nil { throw SessionError.alreadyInSession(peer) }
            if table.count >= configuration.maximumPeers {
                throw SessionError.sessionFull(limit: configuration.maximumPeers)
            }
            table[peer] = Entry(state: .connecting, connection: connection)
            events.yield(.peerStateChanged(peer, .connecting, reason: nil))
        }
    }

    /// Removes `peer` if it is held over `connection` (or over no connection yet) and reports it `notConnected`.
    private func release(_ peer: PeerID, connection: Connection?, reason: DisconnectReason) {
        peers.withLock { table in
            guard let entry = table[peer], entry.connection == nil || entry.connection === connection else { return }
            table[peer] = nil
            events.yield(.peerStateChanged(peer, .notConnected, reason: reason))
        }
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
            try reserve(expectedPeer, connection: nil)
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
                group: MultiThreadedEventLoopGroup.singleton,
                delegate: self
            )
        } catch {
            let reason = DisconnectReason.connectionFailed.with(detail: "\(host):\(port): \(error)")
            if let expectedPeer { release(expectedPeer, connection: nil, reason: reason) }
            throw InvitationError.failed(peer: expectedPeer, reason: reason)
        }
        if let expectedPeer, !attach(connection, to: expectedPeer) {
            connection.close(.localDisconnect.with(detail: "the session disconnected during the invitation"))
        }
        do {
            return try await withTaskCancellationHandler {
                try await connection.established.get()
            } onCancel: {
                connection.close(.localDisconnect.with(detail: "the invitation was cancelled"))
            }
        } catch let error as ConnectionClosedError {
            if let refusal = refusals.withLock({ $0.removeValue(forKey: ObjectIdentifier(connection)) }) {
                throw refusal
            }
            if let peer = error.peer ?? expectedPeer { release(peer, connection: connection, reason: error.reason) }
            throw InvitationError.failed(peer: error.peer ?? expectedPeer, reason: error.reason)
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
        try reserve(peer, connection: connection)
        do {
            try await connection.accept(
                delegate: self,
                keepaliveInterval: connectionConfiguration.keepaliveInterval,
                livenessTimeout: connectionConfiguration.livenessTimeout,
                maximumMessageLength: configuration.maximumMessageLength
            )
        } catch let error as ConnectionClosedError {
            release(peer, connection: connection, reason: error.reason)
            throw InvitationError.notPending(peer: peer, reason: error.reason)
        }
    }

    // MARK: - Leaving

    func disconnectAll() async {
        let connections = peers.withLock { table -> [Connection] in
            for (peer, entry) in table where entry.connection == nil {
                table[peer] = nil
                events.yield(.peerStateChanged(peer, .notConnected, reason: .localDisconnect))
            }
            return table.values.compactMap(\.connection)
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
        let connections = peers.withLock { table in table.values.compactMap(\.connection) }
        for connection in connections {
            connection.close(.localDisconnect)
        }
        datagrams.shutdown()
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

    // MARK: - ConnectionDelegate (on event loops)

    func connection(_ connection: Connection, identified peer: PeerID) {
        let refusal = peers.withLock { table -> SessionError? in
            if let entry = table[peer] {
                if entry.connection === connection { return nil }
                if entry.connection == nil, entry.state == .connecting {
                    table[peer]?.connection = connection
                    return nil
                }
                return SessionError.alreadyInSession(peer)
            }
            if table.count >= configuration.maximumPeers {
                return SessionError.sessionFull(limit: configuration.maximumPeers)
            }
            table[peer] = Entry(state: .connecting, connection: connection)
            events.yield(.peerStateChanged(peer, .connecting, reason: nil))
            return nil
        }
        if let refusal {
            refusals.withLock { $0[ObjectIdentifier(connection)] = refusal }
            connection.close(.localDisconnect.with(detail: refusal.description))
        }
    }

    func connection(
        _ connection: Connection,
        receivedInvitationFrom peer: PeerID,
        context: ByteBuffer,
        timeout: TimeAmount
    ) {
        // Sessions only dial out; invitations arrive at an Advertiser.
        connection.decline(.declined)
    }

    func connection(_ connection: Connection, establishedWith peer: PeerID) {
        let ours = peers.withLock { table -> Bool in
            guard let entry = table[peer], entry.connection === connection || entry.connection == nil else {
                return false
            }
            table[peer] = Entry(state: .connected, connection: connection)
            events.yield(.peerStateChanged(peer, .connected, reason: nil))
            return true
        }
        if ours {
            datagrams.established(connection, with: peer)
        } else {
            connection.close(.unexpectedPeer.with(detail: "\(peer) is not expected in this session"))
        }
    }

    func connection(_ connection: Connection, datagramEndpoint port: UInt16, token: UInt64, from peer: PeerID) {
        datagrams.peerEndpoint(port: port, token: token, on: connection)
    }

    /// An unreliable message arrived by UDP: delivered unless the application is too far behind.
    private func deliverUnreliable(_ data: Data, from peer: PeerID) -> Bool {
        guard events.backlog <= configuration.receiveBufferLimit, state(of: peer) == .connected else { return false }
        events.yield(.dataReceived(data, from: peer, mode: .unreliable), bytes: data.count)
        return true
    }

    func connection(_ connection: Connection, received message: ByteBuffer, from peer: PeerID) -> Bool {
        let data = Data(buffer: message, byteTransferStrategy: .automatic)
        let backlog = events.yield(.dataReceived(data, from: peer, mode: .reliable), bytes: data.count)
        guard backlog > configuration.receiveBufferLimit else { return true }
        readingPaused.store(true, ordering: .sequentiallyConsistent)
        // The subscribers may have drained the backlog before they could see the flag: check again.
        if events.backlog <= configuration.receiveBufferLimit / 2 {
            readingPaused.store(false, ordering: .sequentiallyConsistent)
            return true
        }
        return false
    }

    func connection(_ connection: Connection, channelEvent event: InboundChannelEvent, from peer: PeerID) {
        switch event {
        case .opened(let open):
            opened(open, on: connection, from: peer)
        case .received(let channel, let bytes):
            transfers.withLock { $0[TransferKey(connection, channel)] }?.received(bytes)
        case .ended(let channel, let digest):
            let transfer = transfers.withLock { table -> (any InboundTransfer)? in
                let key = TransferKey(connection, channel)
                guard let transfer = table[key] else { return nil }
                if transfer.endsAtEnd { table[key] = nil }
                return transfer
            }
            transfer?.ended(digest: digest)
        case .reset(let channel, let code):
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: TransferKey(connection, channel)) })
            else { return }
            transfer.failed(.from(code, byPeer: true, peer: peer, name: transfer.name))
        }
    }

    private func opened(_ open: Frame.Open, on connection: Connection, from peer: PeerID) {
        let name = String(decoding: open.name, as: UTF8.self)
        switch open.kind {
        case .stream:
            let receiver = StreamReceiver(name: name, peer: peer, connection: connection, channel: open.channel)
            transfers.withLock { $0[TransferKey(connection, open.channel)] = receiver }
            events.yield(.streamReceived(IncomingStream(receiver: receiver)))
        case .resource:
            let key = TransferKey(connection, open.channel)
            let receiver = ResourceReceiver(
                open: open,
                peer: peer,
                connection: connection,
                directory: configuration.resourceDirectory,
                window: max(configuration.resourceWindow, WireProtocol.initialChannelWindow)
            ) { [weak self] result in
                self?.resourceFinished(key, name: name, from: peer, result: result)
            }
            transfers.withLock { $0[key] = receiver }
            resourcesInFlight.started(
                TransferRecord(name: name, peer: peer, isIncoming: true, progress: receiver.progress),
                key: .channel(key)
            )
            events.yield(.startedReceivingResource(name: name, from: peer, progress: receiver.progress))
            receiver.start()
        }
    }

    private func resourceFinished(
        _ key: TransferKey,
        name: String,
        from peer: PeerID,
        result: Result<URL, TransferError>
    ) {
        transfers.withLock { $0[key] = nil }
        resourcesInFlight.ended(.channel(key))
        events.yield(.finishedReceivingResource(name: name, from: peer, result: result))
    }

    func connection(_ connection: Connection, closedWith peer: PeerID?, reason: DisconnectReason) {
        let ended = transfers.withLock { table -> [any InboundTransfer] in
            let keys = table.keys.filter { $0.connection == ObjectIdentifier(connection) }
            return keys.compactMap { table.removeValue(forKey: $0) }
        }
        for transfer in ended {
            transfer.failed(.connectionClosed(reason, peer: peer, name: transfer.name))
        }
        datagrams.closed(connection)
        if let peer {
            release(peer, connection: connection, reason: reason)
        }
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
