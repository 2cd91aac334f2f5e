import PeerConnectivityCore

/// The full mesh's decisions, as MPC keeps one: a peer accepted into a session that holds others ends
/// connected to every member. No I/O, no clock: it takes events and returns what to do.
///
/// Each session listens on a port of its own for other members, and tells each connected peer that
/// port (SESSION-LISTENER). When a member M learns the port of a peer P, M tells P about its other
/// members, and tells them about P (MEMBERS, with addresses as M sees them). Of two members that lack
/// a connection to each other, the one with the lower peer id dials the other's listener; the listener
/// accepts only peers a member has introduced (an invitation that arrives before its introduction is
/// held until it comes, or until the session's grace period runs out).
///
/// Generic over the connection so that the tests drive it in memory (`SessionSimulation`), while the
/// session (`SessionRuntime+Mesh.swift`) runs it under a lock over ``Connection``s.
struct MeshStateMachine<Connection: AnyObject> {
    /// Where the session's own listener is.
    enum Listener {
        /// Being bound: connections established meanwhile are told its port once it is.
        case binding(waiting: [Connection])
        /// Bound on `port`.
        case bound(port: Int)
        /// The session ended.
        case closed
    }

    /// What to tell whom once a member's listener is known.
    struct Introductions {
        /// The members to tell the newcomer about (MEMBERS over the newcomer's connection).
        var toNewcomer: [Frame.Member]
        /// The members to tell about the newcomer (MEMBERS with the newcomer alone, over each one's connection).
        var newcomerTo: [PeerID]
    }

    /// What to do once a member introduced another.
    enum Introduction {
        /// The introduced member is knocking already: accept its held invitation.
        case accept(Connection)
        /// This side dials the member's listener (it has the lower id and lacks a connection); report
        /// the dial's end with ``dialEnded(_:_:)``.
        case dial(Frame.Member)
        /// The introducer has enough dials under way: the member waits for the next MEMBERS.
        case deferred
        /// Nothing to do: the member dials this side, or is held already.
        case none
    }

    /// What to do with an invitation to the session's listener.
    enum Invitation {
        /// A member introduced the inviter: accept it.
        case accept
        /// Hold it until the introduction comes (``introduced(_:by:isHeld:)``) or the grace period ends
        /// (``holdExpired(_:connection:)``); decline `replaced`, an older held invitation of the same peer.
        case hold(replacing: Connection?)
    }

    /// This side's identity: the lower peer id of two members dials.
    let localPeer: PeerID
    /// Dials to introduced members that one member's introductions may have under way at once.
    let maximumDialsPerIntroducer: Int

    private(set) var listener = Listener.binding(waiting: [])
    /// Where each connected member's session accepts members (its address as this side sees it), and
    /// over which connection this side learned it.
    private var endpoints: [PeerID: (member: Frame.Member, connection: ObjectIdentifier)] = [:]
    /// Members that a member introduced (MEMBERS): they may connect to this session, and it to them.
    /// Forgotten when the introducer's connection closes.
    private(set) var introduced: [PeerID: (member: Frame.Member, introducer: ObjectIdentifier)] = [:]
    /// Dials under way to members introduced over each connection.
    private var dialsInFlight: [ObjectIdentifier: Int] = [:]
    /// Invitations to the listener from peers not introduced yet, held for a moment.
    private var held: [PeerID: Connection] = [:]
    /// This side's dials to members, under way or waiting to be tried again (see
    /// `MeshStateMachine+Healing.swift`): one per member at a time.
    var memberDials: [PeerID: MemberDial] = [:]
    /// Numbers the retries, so that a retry's timer left from before is told apart.
    var retryGeneration = 0

    init(localPeer: PeerID, maximumDialsPerIntroducer: Int) {
        self.localPeer = localPeer
        self.maximumDialsPerIntroducer = maximumDialsPerIntroducer
    }

    // MARK: - The listener

    /// The listener's port, once bound.
    var listenerPort: Int? {
        guard case .bound(let port) = listener else { return nil }
        return port
    }

    /// The listener is bound on `port`.
    ///
    /// - Returns: the connections to tell its port; `nil` if the session ended meanwhile (close the listener).
    mutating func listenerBound(port: Int) -> [Connection]? {
        guard case .binding(let waiting) = listener else { return nil }
        listener = .bound(port: port)
        return waiting
    }

    /// The session ended: nothing more is learned or announced.
    mutating func close() {
        listener = .closed
        held = [:]
        memberDials = [:]
    }

    /// Whether the session ended.
    var isClosed: Bool {
        if case .closed = listener { return true }
        return false
    }

    // MARK: - Connections

    /// A peer is connected over `connection`.
    ///
    /// - Returns: the listener's port to tell it now; `nil` if it is told once the listener is bound
    ///   (or never, the session having ended).
    mutating func established(_ connection: Connection) -> Int? {
        switch listener {
        case .binding(var waiting):
            waiting.append(connection)
            listener = .binding(waiting: waiting)
            return nil
        case .bound(let port):
            return port
        case .closed:
            return nil
        }
    }

    /// `connection` closed: forget what was learned over it.
    mutating func closed(_ connection: Connection) {
        let key = ObjectIdentifier(connection)
        if case .binding(var waiting) = listener {
            waiting.removeAll { $0 === connection }
            listener = .binding(waiting: waiting)
        }
        endpoints = endpoints.filter { $0.value.connection != key }
        introduced = introduced.filter { $0.value.introducer != key }
        held = held.filter { $0.value !== connection }
    }

    // MARK: - Introductions

    /// `member`'s listener is known (its SESSION-LISTENER arrived over `connection`).
    ///
    /// - Parameter isConnected: whether the session holds a peer connected.
    mutating func learned(
        _ member: Frame.Member,
        over connection: Connection,
        isConnected: (PeerID) -> Bool
    ) -> Introductions {
        endpoints[member.peer] = (member, ObjectIdentifier(connection))
        let others = endpoints.values.map(\.member).filter { $0.peer != member.peer && isConnected($0.peer) }
        return Introductions(
            toNewcomer: Array(others.prefix(Int(UInt8.max))),
            newcomerTo: others.map(\.peer)
        )
    }

    /// A member told this side about `member` over `introducer` (MEMBERS).
    ///
    /// - Parameter isHeld: whether the session holds `member` already (connecting or connected).
    mutating func introduced(_ member: Frame.Member, by introducer: Connection, isHeld: Bool) -> Introduction {
        guard member.peer != localPeer else { return .none }
        let key = ObjectIdentifier(introducer)
        introduced[member.peer] = (member, key)
        if let knocking = held.removeValue(forKey: member.peer) { return .accept(knocking) }
        guard !isHeld, memberDials[member.peer] == nil, dials(member.peer) else { return .none }
        guard dialsInFlight[key, default: 0] < maximumDialsPerIntroducer else { return .deferred }
        dialsInFlight[key, default: 0] += 1
        memberDials[member.peer] = MemberDial(attempt: 1, introducer: key)
        return .dial(member)
    }

    /// Whether this side dials `peer` when neither holds the other: the lower peer id dials.
    func dials(_ peer: PeerID) -> Bool {
        SessionStateMachine<Connection, Void>.winsTieBreak(inviter: localPeer, over: peer)
    }

    /// Counts a dial to a member introduced over `introducer` as ended, for the per-introducer limit.
    mutating func countDialEnded(introducedBy introducer: ObjectIdentifier?) {
        guard let introducer else { return }
        let left = dialsInFlight[introducer, default: 1] - 1
        dialsInFlight[introducer] = left > 0 ? left : nil
    }

    /// An invitation to the session's listener from `inviter` arrived on `connection`.
    mutating func invitation(from inviter: PeerID, on connection: Connection) -> Invitation {
        if introduced[inviter] != nil { return .accept }
        let replaced = held.updateValue(connection, forKey: inviter)
        return .hold(replacing: replaced === connection ? nil : replaced)
    }

    /// The grace period of an invitation held since ``invitation(from:on:)`` ran out.
    ///
    /// - Returns: whether it is still held unintroduced (decline it).
    mutating func holdExpired(_ inviter: PeerID, connection: Connection) -> Bool {
        guard held[inviter] === connection else { return false }
        held[inviter] = nil
        return true
    }
}
