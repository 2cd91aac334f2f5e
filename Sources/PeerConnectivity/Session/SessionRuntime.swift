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
final class SessionRuntime: ConnectionDelegate, Sendable {
    /// The peer table and its decisions (``SessionStateMachine``), over this module's connections.
    typealias PeerTable = SessionStateMachine<Connection, CheckedContinuation<Void, any Error>>
    /// A peer the session holds.
    typealias Entry = PeerTable.Record

    let peer: PeerID
    let configuration: Session.Configuration
    let connectionConfiguration: ConnectionConfiguration
    /// The event loop of the session's I/O (``PeerEventLoop``): its dials, listener, datagrams, timers and
    /// ``Session/taskExecutor``.
    let eventLoop: any EventLoop
    /// The session's own listener and what it knows of the other members' (see `SessionRuntime+Mesh.swift`).
    let mesh: Mutex<MeshState>
    /// The binding of the session's listener, when it has one (mesh or reconnection).
    let listenerBinding = Mutex<Task<Void, Never>?>(nil)
    /// The session's events, in order, for every subscriber; ``Session/Events`` reads them.
    let events = EventHub<SessionEvent>()
    let peers: Mutex<PeerTable>
    private let shutDown = Atomic<Bool>(false)
    /// Whether the session was released.
    var isShutDown: Bool { shutDown.load(ordering: .relaxed) }
    /// Direct dials refused once the peer said who it is (already in the session, or the session
    /// filled up meanwhile), so that `invite` throws the same ``SessionError`` as a browser invite.
    let refusals = Mutex([ObjectIdentifier: Refusal]())

    /// Why this side closed one of its own dials once the peer said who it is.
    enum Refusal {
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
    let transfers = Mutex([TransferKey: any IncomingTransfer]())
    /// The resources in flight both ways, for ``SessionModel``.
    let resourcesInFlight = TransferRegistry()
    /// The session's places for resources arriving at once (``Session/Configuration/maximumIncomingResources``).
    let incomingResources: IncomingResourceSlots
    /// The free space of the resource directory's file system, for the check at each resource's OPEN.
    let freeSpace: FreeSpaceGauge
    /// The session as an owner of large messages being received, in ``LargeMessageMemory/process``.
    let messageOwner = LargeMessageMemory.process.newOwner()
    let readingPaused = Atomic<Bool>(false)

    /// The session's encryption preference.
    let encryptionPreference: EncryptionPreference

    init(peer: PeerID, configuration: Session.Configuration, security: ConnectionSecurity?) {
        self.peer = peer
        self.configuration = configuration
        self.mesh = Mutex(MeshState(localPeer: peer, maximumDialsPerIntroducer: Self.maximumDialsPerIntroducer))
        self.peers = Mutex(
            PeerTable(
                localPeer: peer,
                maximumPeers: configuration.maximumPeers,
                reconnectionWindow: configuration.reconnection?.window
            )
        )
        self.eventLoop = PeerEventLoop.loop(for: peer, in: configuration.ioGroup)
        self.encryptionPreference = security?.preference ?? .none
        self.incomingResources = IncomingResourceSlots(limit: configuration.maximumIncomingResources)
        self.freeSpace = FreeSpaceGauge(directoryPath: configuration.resourceDirectory.path)
        var connectionConfiguration = ConnectionConfiguration(
            maximumMessageLength: configuration.maximumMessageLength,
            handshakeTimeout: TimeAmount(configuration.handshakeTimeout),
            keepaliveInterval: TimeAmount(configuration.keepaliveInterval),
            livenessTimeout: TimeAmount(configuration.livenessTimeout),
            logger: configuration.logger,
            security: security,
            encryptedBefore: configuration.certificatePolicy.hasSeenEncrypted
        )
        connectionConfiguration.notSentLowWatermark = configuration.notSentLowWatermark
        connectionConfiguration.gatesUnsentBytes = configuration.gatesUnsentBytes
        connectionConfiguration.congestionControl = configuration.congestionControl
        connectionConfiguration.dialFamily = configuration.dialFamily
        connectionConfiguration.localAddress = configuration.localAddress
        self.connectionConfiguration = connectionConfiguration
        datagrams.start(
            on: eventLoop,
            host: configuration.localAddress,
            ports: configuration.datagramPorts,
            logger: configuration.logger
        ) {
            [weak self] data, peer in
            self?.deliverUnreliable(data, from: peer) ?? false
        }
        if configuration.joinsMesh || configuration.reconnection != nil {
            let binding = startMesh()
            listenerBinding.withLock { $0 = binding }
        }
    }

    // MARK: - Queries

    func peers(in state: PeerState) -> [PeerID] {
        peers.withLock { table in table.all.filter { $0.value.state == state }.map(\.key) }
    }

    func state(of peer: PeerID) -> PeerState {
        peers.withLock { $0[peer]?.state ?? .notConnected }
    }

    /// The state of every peer the session holds.
    var peerStates: [PeerID: PeerState] {
        peers.withLock { table in table.states }
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
            return (id, table.states)
        }
    }

    /// The connection to a connected peer.
    ///
    /// - Parameter size: a message to go over it: refused if the peer announced a smaller limit.
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` or ``SessionError/messageTooLargeForPeer(_:size:limit:)``.
    func connection(to target: PeerID, carrying size: Int = 0) throws(SessionError) -> Connection {
        try peers.withLock { table throws(SessionError) in
            try Self.connectedConnection(to: target, carrying: size, in: table)
        }
    }

    /// A DATA frame carrying `data`, in the session's pooled buffers: what a send or a responder's reply writes.
    func dataFrame(_ data: Data) -> EncodedFrame {
        let frame = data.withUnsafeBytes { FrameEncoder.dataFrame($0, makeBuffer: sendBuffers.buffer(capacity:)) }
        sendBuffers.recycle(frame)
        return frame
    }

    /// Whether `peer` reads folder channels, as its first connection's handshake said.
    func peerReadsFolders(_ peer: PeerID) -> Bool {
        peers.withLock { $0[peer]?.peerReadsFolders ?? false }
    }

    /// The hash of block digests the link to `peer` agreed on at its first connection's handshake.
    func blockDigestKind(_ peer: PeerID) -> BlockDigestKind {
        peers.withLock { $0[peer]?.blockDigestKind ?? .xxh64 }
    }

    /// The connections to connected peers, under one lock: none is returned unless every target is
    /// connected and takes a message of `size` bytes.
    func connections(to targets: [PeerID], carrying size: Int = 0) throws(SessionError) -> [Connection] {
        try peers.withLock { table throws(SessionError) in
            try targets.map { target throws(SessionError) in
                try Self.connectedConnection(to: target, carrying: size, in: table)
            }
        }
    }

    private static func connectedConnection(
        to target: PeerID,
        carrying size: Int,
        in table: PeerTable
    ) throws(SessionError) -> Connection {
        guard let link = table.connectedLink(to: target) else {
            throw SessionError.peerNotConnected(target)
        }
        if let accepts = link.accepts, size > accepts {
            throw SessionError.messageTooLargeForPeer(target, size: size, limit: accepts)
        }
        return link.connection
    }

    // MARK: - Joining

    /// Runs `body` on the peer table under its lock, then reports the state changes it made, still under
    /// the lock: events come out in the order of the changes.
    func withPeers<Result: Sendable, Failure: Error>(
        _ body: (inout PeerTable) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try peers.withLock { table throws(Failure) -> Result in
            defer {
                for change in table.takeChanges() {
                    events.yield(.peerStateChanged(change.peer, change.state, reason: change.reason))
                }
            }
            return try body(&table)
        }
    }

    /// Removes `peer` if it is held over `connection` (or over no connection yet) and reports it `notConnected`.
    func release(_ peer: PeerID, connection: Connection?, reason: DisconnectReason) {
        let removed = withPeers { table in table.release(peer, connection: connection, reason: reason) }
        guard let removed else { return }
        for waiter in removed.waiters { waiter.resume(throwing: InvitationError.failed(peer: peer, reason: reason)) }
        for waiter in removed.link?.sendWaiters ?? [] {
            waiter.resume(throwing: SessionError.peerNotConnected(peer, reason: reason))
        }
        meshPeerLost(peer, reason: reason)
    }

    /// Waits until `peer` is connected, over whichever connection; throws if it leaves the session first.
    func waitUntilConnected(_ peer: PeerID) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            switch peers.withLock({ $0.wait(for: peer, continuation) }) {
            case true: continuation.resume()
            case false: continuation.resume(throwing: InvitationError.failed(peer: peer, reason: .connectionLost))
            case nil: break
            }
        }
    }

    /// The peer closed the connection holding it as a duplicate: it invited this side at the same
    /// moment and keeps the other connection. The peer stays `connecting` until that one arrives, or is
    /// released after the configuration's `replacementGracePeriod`.
    ///
    /// - Returns: `false` if the connection did not hold the peer.
    func awaitReplacement(of peer: PeerID, closed connection: Connection) -> Bool {
        guard withPeers({ $0.closedAsDuplicate(peer, connection: connection) }) else { return false }
        connection.eventLoop.scheduleTask(in: TimeAmount(configuration.replacementGracePeriod)) { [weak self] in
            self?.giveUpReplacement(of: peer)
        }
        return true
    }

    private func giveUpReplacement(of peer: PeerID) {
        let removed = withPeers { $0.replacementExpired(peer) }
        let reason = DisconnectReason.duplicate.with(detail: "the replacing connection never came")
        for waiter in removed?.waiters ?? [] {
            waiter.resume(throwing: InvitationError.failed(peer: peer, reason: reason))
        }
    }

    // MARK: - Leaving

    func disconnectAll() async {
        let (connections, removed) = withPeers { table in
            let removed = table.releaseUnconnected { record in
                guard record.link != nil else { return .localDisconnect }
                // A link being re-established: what the peer never confirmed is not delivered.
                return DisconnectReason.localDisconnect.with(unconfirmedMessages: record.link!.ledger.abandon().count)
            }
            return (table.connections, removed)
        }
        let waiters = removed.flatMap { $0.waiters + ($0.link?.sendWaiters ?? []) }
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
        let connections = peers.withLock { table in table.connections }
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
        let connections = peers.withLock { table in table.connections }
        for connection in connections {
            connection.resumeReading()
        }
    }
}
