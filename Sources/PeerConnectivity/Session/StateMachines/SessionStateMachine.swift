import PeerConnectivityCore

/// The session's peer table and the decisions about it: who joins, which of two crossing invitations
/// wins, what a duplicate's close means. No I/O, no clock: it takes events and returns verdicts, and
/// queues the peer state changes to report (``takeChanges()``), in the order they happened.
///
/// Generic over the connection, the resumable link and the waiting caller so that the tests drive it
/// in memory with stand-ins, while the session (``SessionRuntime``) uses ``Connection``, ``ResumableLink``
/// and continuations. It lives beside the session, in one module, so that the per-message lookups
/// (``connectedConnection(to:)``) are specialised.
///
/// Reconnection's decisions are here too (`SessionStateMachine+Resumption.swift`); the mesh's are
/// ``MeshStateMachine``'s. The link bookkeeping of the message path (numbering, acknowledgements) changes
/// ``Record``s in place through ``subscript(_:)``, so that a send costs one lookup.
struct SessionStateMachine<Connection: AnyObject, Waiter> {
    /// A peer's link, with reconnection on.
    typealias Link = ResumableLink<Connection, Waiter>

    /// A peer the session holds.
    struct Record {
        /// `connecting` or `connected`: a peer not held is `notConnected`.
        var state: PeerState
        /// `nil` while an invitation is being dialled, or while a link is re-established.
        var connection: Connection?
        /// Whether this side invited the peer (the connection is, or will be, our dial).
        var invitedByUs = false
        /// Callers waiting until the peer is connected (or gone), whichever connection wins.
        var waiters: [Waiter] = []
        /// The peer closed our connection as a duplicate: the one that replaces it is on its way.
        var awaitingReplacement = false
        /// With reconnection on, once connected: the link's secrets, numbering and kept messages.
        var link: Link?
        /// The largest message the peer accepts, as its first connection announced (kept across resumes).
        var peerAccepts: Int?
        /// Whether the peer reads folder channels, as its first connection announced (kept across resumes).
        var peerReadsFolders = false
        /// Whether the peer probes its UDP path, as its first connection announced (kept across resumes).
        var peerProbesDatagrams = false
        /// The hash of block digests the peer's first connection agreed on (kept across resumes).
        var blockDigestKind = BlockDigestKind.xxh64
    }

    /// A change of a peer's state, to report as ``SessionEvent/peerStateChanged(_:_:reason:)``.
    struct Change {
        let peer: PeerID
        let state: PeerState
        let reason: DisconnectReason?
    }

    /// What to do with a dial of ours once the peer said who it is.
    enum Identification {
        /// The connection holds the peer; close `replaced` (a connection of the peer's that this one
        /// beats in the tie-break), if any.
        case proceed(replacing: Connection?)
        /// The session cannot take the peer: close the connection; `invite` throws this.
        case refuse(SessionError)
        /// The peer invited this side at the same moment and its invitation wins: close ours, the
        /// peer joins through its own.
        case lostTieBreak
    }

    /// What to do with an invitation from a peer (an ACCEPT to give, or not).
    enum Admission {
        /// The peer is new here (or the replacement awaited): accept it, it is `connecting`.
        case admitted
        /// Both sides invited each other at once and the peer's invitation wins the tie-break: accept
        /// it and close our own dial (`nil` if not made yet).
        case supersedes(Connection?)
        /// Our own invitation wins the tie-break: leave this one unanswered until ours is through,
        /// then decline it.
        case duplicate
    }

    /// This side's identity: the tie-break compares it with the peer's.
    let localPeer: PeerID
    /// How many peers the session holds at most.
    let maximumPeers: Int
    /// With reconnection on, how long a dropped link may take to come back.
    let reconnectionWindow: Duration?
    /// The peers held; changed only by this machine's methods (in its files) and ``subscript(_:)``.
    var records: [PeerID: Record] = [:]
    private var changes: [Change] = []
    /// Numbers the drops of links being re-established, so a later drop's timers and dials are told apart.
    var reconnectGeneration = 0

    init(localPeer: PeerID, maximumPeers: Int, reconnectionWindow: Duration? = nil) {
        self.localPeer = localPeer
        self.maximumPeers = maximumPeers
        self.reconnectionWindow = reconnectionWindow
    }

    // MARK: - The table

    /// The record of `peer`, changed in place (a copy would copy a link's kept messages).
    subscript(peer: PeerID) -> Record? {
        get { records[peer] }
        _modify { yield &records[peer] }
    }

    /// How many peers the session holds.
    var count: Int { records.count }

    /// Every peer held and its record.
    var all: [PeerID: Record] { records }

    /// The state of every peer held.
    var states: [PeerID: PeerState] { records.mapValues(\.state) }

    /// The connections of every peer held.
    var connections: [Connection] { records.values.compactMap(\.connection) }

    /// The state changes since the last call, oldest first.
    mutating func takeChanges() -> [Change] {
        defer { changes.removeAll(keepingCapacity: true) }
        return changes
    }

    /// Queues a change to report (for the parts of the session that still change records in place).
    mutating func report(_ peer: PeerID, _ state: PeerState, reason: DisconnectReason? = nil) {
        changes.append(Change(peer: peer, state: state, reason: reason))
    }

    /// The connection to `peer` if it is connected.
    func connectedConnection(to peer: PeerID) -> Connection? {
        connectedLink(to: peer)?.connection
    }

    /// The connection to `peer` if it is connected, and the largest message the peer accepts.
    func connectedLink(to peer: PeerID) -> (connection: Connection, accepts: Int?)? {
        guard let record = records[peer], record.state == .connected, let connection = record.connection else {
            return nil
        }
        return (connection, record.peerAccepts)
    }

    /// Whether `peer` is held over a connection other than `connection` (the other invitation won).
    func isHeld(_ peer: PeerID, overAnotherThan connection: Connection) -> Bool {
        guard let held = records[peer]?.connection else { return false }
        return held !== connection
    }

    /// Whether an invitation from `inviter` beats one from `invitee` when two peers invite each other at
    /// once: the lower peer id wins, the same on both sides.
    static func winsTieBreak(inviter: PeerID, over invitee: PeerID) -> Bool {
        inviter.id.uuidString < invitee.id.uuidString
    }

    // MARK: - Joining

    /// Holds a place for `peer` as `connecting` before its dial (this side invites it).
    ///
    /// - Throws: ``SessionError/alreadyInSession(_:)`` or ``SessionError/sessionFull(limit:)``.
    mutating func reserve(_ peer: PeerID) throws(SessionError) {
        if records[peer] != nil { throw SessionError.alreadyInSession(peer) }
        try admit(peer, connection: nil, invitedByUs: true)
    }

    /// Records the dialled connection of a reserved peer.
    ///
    /// - Returns: `false` if the place is gone or another connection holds the peer (its invitation won),
    ///   or the peer already got a link whose connection dropped meanwhile (this dial is stale).
    mutating func attach(_ connection: Connection, to peer: PeerID) -> Bool {
        guard let record = records[peer] else { return false }
        if record.connection == nil, record.link == nil { records[peer]?.connection = connection }
        return records[peer]?.connection === connection
    }

    /// A dial of ours learned who answered.
    mutating func identified(_ peer: PeerID, on connection: Connection) -> Identification {
        guard let record = records[peer] else {
            do throws(SessionError) {
                try admit(peer, connection: connection, invitedByUs: true)
                return .proceed(replacing: nil)
            } catch {
                return .refuse(error)
            }
        }
        if record.connection === connection { return .proceed(replacing: nil) }
        if record.connection == nil, record.state == .connecting {
            records[peer]?.connection = connection
            if record.awaitingReplacement {
                records[peer]?.invitedByUs = true
                records[peer]?.awaitingReplacement = false
            }
            return .proceed(replacing: nil)
        }
        // The peer invited this side too: the invitation of the lower peer id wins, on both sides.
        guard !record.invitedByUs else { return .refuse(.alreadyInSession(peer)) }
        guard Self.winsTieBreak(inviter: localPeer, over: peer) else { return .lostTieBreak }
        return .proceed(replacing: supersede(peer, with: connection, invitedByUs: true))
    }

    /// An invitation from `peer` arrived on `connection` and the application accepts it.
    ///
    /// - Throws: ``SessionError/alreadyInSession(_:)`` when the peer is held and this side did not
    ///   invite it, ``SessionError/sessionFull(limit:)`` when there is no room.
    mutating func invitation(from peer: PeerID, on connection: Connection) throws(SessionError) -> Admission {
        guard let record = records[peer] else {
            try admit(peer, connection: connection, invitedByUs: false)
            return .admitted
        }
        if record.awaitingReplacement {
            records[peer]?.connection = connection
            records[peer]?.invitedByUs = false
            records[peer]?.awaitingReplacement = false
            return .admitted
        }
        // We invited the same peer: the invitation of the lower peer id wins, on both sides.
        guard record.invitedByUs else { throw SessionError.alreadyInSession(peer) }
        guard Self.winsTieBreak(inviter: peer, over: localPeer) else { return .duplicate }
        return .supersedes(supersede(peer, with: connection, invitedByUs: false))
    }

    /// The handshake on `connection` completed with `peer`.
    ///
    /// - Returns: the callers waiting for the peer, to resume; `nil` if the peer is not expected over
    ///   this connection (close it).
    mutating func established(_ peer: PeerID, on connection: Connection) -> [Waiter]? {
        guard let record = records[peer], record.connection === connection || record.connection == nil else {
            return nil
        }
        records[peer] = Record(state: .connected, connection: connection, invitedByUs: record.invitedByUs)
        report(peer, .connected)
        return record.waiters
    }

    /// Adds `caller` to those waiting until `peer` is connected.
    ///
    /// - Returns: `nil` if it waits; otherwise whether the peer is connected (`true`) or not held.
    mutating func wait(for peer: PeerID, _ caller: Waiter) -> Bool? {
        guard let record = records[peer] else { return false }
        if record.state == .connected { return true }
        records[peer]?.waiters.append(caller)
        return nil
    }

    // MARK: - Leaving

    /// The peer closed the connection holding it as a duplicate: it invited this side at the same moment
    /// and keeps the other connection. The peer stays `connecting` until that one arrives, or until
    /// ``replacementExpired(_:)``.
    ///
    /// - Returns: `false` if the connection did not hold the peer.
    mutating func closedAsDuplicate(_ peer: PeerID, connection: Connection) -> Bool {
        guard let record = records[peer], record.connection === connection else { return false }
        records[peer]?.connection = nil
        records[peer]?.awaitingReplacement = true
        if record.state == .connected {
            records[peer]?.state = .connecting
            report(peer, .connecting)
        }
        return true
    }

    /// The grace period for a duplicate's replacement ran out.
    ///
    /// - Returns: the record removed if the replacement never came (its callers fail).
    mutating func replacementExpired(_ peer: PeerID) -> Record? {
        guard records[peer]?.awaitingReplacement == true, records[peer]?.connection == nil else { return nil }
        return release(peer, connection: nil, reason: .duplicate.with(detail: "the replacing connection never came"))
    }

    /// Removes `peer` if it is held over `connection` (or over no connection yet) and reports it gone.
    ///
    /// - Returns: the record removed, whose callers fail.
    mutating func release(_ peer: PeerID, connection: Connection?, reason: DisconnectReason) -> Record? {
        guard let record = records[peer], record.connection == nil || record.connection === connection else {
            return nil
        }
        records[peer] = nil
        report(peer, .notConnected, reason: reason)
        return record
    }

    /// Removes every peer held over no connection (dials and links under way), reporting each gone with
    /// the reason `reasonFor` gives; the others leave when their connections close.
    ///
    /// - Returns: the records removed.
    mutating func releaseUnconnected(reason reasonFor: (inout Record) -> DisconnectReason) -> [Record] {
        var removed: [Record] = []
        for (peer, record) in records where record.connection == nil {
            var record = record
            records[peer] = nil
            report(peer, .notConnected, reason: reasonFor(&record))
            removed.append(record)
        }
        return removed
    }

    // MARK: - Private

    private mutating func admit(_ peer: PeerID, connection: Connection?, invitedByUs: Bool) throws(SessionError) {
        if records.count >= maximumPeers {
            throw SessionError.sessionFull(limit: maximumPeers)
        }
        records[peer] = Record(state: .connecting, connection: connection, invitedByUs: invitedByUs)
        report(peer, .connecting)
    }

    /// Puts `connection` in place of the one holding `peer`; a peer that was connected shows as
    /// `connecting` until the new connection is established.
    ///
    /// - Returns: the connection replaced, for the caller to close.
    private mutating func supersede(_ peer: PeerID, with connection: Connection, invitedByUs: Bool) -> Connection? {
        let replaced = records[peer]?.connection
        records[peer]?.connection = connection
        records[peer]?.invitedByUs = invitedByUs
        if records[peer]?.state == .connected {
            records[peer]?.state = .connecting
            report(peer, .connecting)
        }
        return replaced
    }
}

extension SessionStateMachine.Record: Sendable where Connection: Sendable, Waiter: Sendable {}
extension SessionStateMachine.Admission: Sendable where Connection: Sendable {}
extension SessionStateMachine.Identification: Sendable where Connection: Sendable {}
