import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityFuzz

@testable import PeerConnectivity

/// A connection between two simulated sessions: a number and who dialled whom.
final class SimulatedConnection: CustomStringConvertible {
    let number: Int
    let inviter: Int
    let invitee: Int
    /// Each end's view: closed there yet.
    var closed: [Int: Bool]
    /// The sides whose session handles this connection's events: the inviter's from the dial, the
    /// invitee's once it accepts (until then the advertiser has it, and the session never sees its close).
    var ownedBy: Set<Int>
    /// Why it closed, at each end.
    var closeReason: [Int: DisconnectReason] = [:]
    /// The inviter closed it because the peer's crossing invitation won (its `invite` then waits).
    var lostTieBreak = false
    /// Dialled to resume a link: its events reach the session only once the link is resumed.
    var resumes = false
    /// The cable is cut: nothing more crosses, each end notices in its own time.
    var cut = false
    /// Dialled to the invitee's session listener (a mesh member's dial), not to its advertiser.
    var toListener = false
    /// A mesh member's dial whose end the dialler has yet to report to its mesh machine.
    var reportsMeshDial = false
    /// The invitee's HELLO reached the inviter: a mesh dial (which holds no place before) now holds the peer.
    var answered = false

    init(number: Int, inviter: Int, invitee: Int) {
        self.number = number
        self.inviter = inviter
        self.invitee = invitee
        self.closed = [inviter: false, invitee: false]
        self.ownedBy = [inviter]
    }

    var description: String { "c\(number)(\(inviter)→\(invitee))" }

    func other(than side: Int) -> Int { side == inviter ? invitee : inviter }
}

/// Two or more sessions' peer tables (``SessionStateMachine``) joined by simulated connections, with
/// no sockets and no clock: a seeded scheduler picks which frame in flight arrives next, so one seed
/// is one order of events, and many seeds cover the races (crossing invitations, a cut during the
/// handshake, a decline racing an accept). Each side reacts to a verdict as ``SessionRuntime`` does.
struct SessionSimulation {
    typealias Table = SessionStateMachine<SimulatedConnection, Int>

    /// What crosses a connection, in order, one way.
    enum Frame {
        case invite
        case hello
        case accept
        case decline(DisconnectReason)
        case goodbye(DisconnectReason)
        case cut
        // Reconnection.
        case resumeSecret([UInt8])
        case listener
        case data(Int)
        case ack(UInt64)
        case resume(secret: [UInt8], nextExpected: UInt64)
        case resumed(nextExpected: UInt64)
        // Mesh.
        case members([PeerConnectivityCore.Frame.Member])
    }

    /// Something a side does or receives: a frame arriving, or the application's own step.
    enum Step {
        case arrive(SimulatedConnection, to: Int, Frame)
        case invite(from: Int, to: Int)
        /// The dial returned: the session records its connection (HELLO may have come back already).
        case attach(SimulatedConnection, at: Int, to: Int)
        case cut(SimulatedConnection)
        /// One end of a cut connection notices (liveness).
        case notice(SimulatedConnection, at: Int)
        /// The application sends message `index` (reconnection runs number them).
        case send(from: Int, to: Int, index: Int)
        /// A receiver's acknowledgement timer fires.
        case ackTimer(SimulatedConnection, at: Int)
        /// A mesh member dials an introduced member's listener.
        case meshDial(from: Int, to: Int)
        /// The session accepts a member's invitation to its listener.
        case acceptMember(SimulatedConnection, at: Int, from: Int)
    }

    let peers: [PeerID]
    var tables: [Table]
    /// Per side, every state change reported, in order.
    var reported: [[Table.Change]]
    /// Invitations each side's application declines rather than accepts (by inviter).
    var declines: Set<[Int]> = []
    /// Frames in flight, per connection and direction (FIFO), and the application steps not yet taken.
    var inFlight: [(key: String, steps: [Step])] = []
    private var pendingDeclines: [(side: Int, connection: SimulatedConnection, peer: Int)] = []
    private var awaitingReplacement: [(side: Int, peer: Int)] = []
    var nextNumber = 1
    private var cutsOnlyConnected = false
    /// Messages each side delivered to its application, by sender, in order (reconnection runs).
    var delivered: [[Int]]
    /// Messages each side's `send` took (not refused as not connected), in order.
    var accepted: [[Int]]
    /// Why an ACK broke the protocol, if one did (a correct run has none).
    private(set) var violations: [String] = []
    /// How many messages were sent again after a resume.
    private(set) var sentAgain = 0
    /// How many messages the cut lost on the wire.
    private(set) var lostInFlight = 0
    private var windows: [(side: Int, peer: Int, generation: Int)] = []
    /// What each RESUME said its sender had received, by connection, until the link resumes.
    fileprivate var pendingExpectations: [Int: UInt64] = [:]
    private var generator: SplitMix64

    /// The next number of the seeded sequence.
    mutating func randomNumber() -> UInt64 { generator.next() }
    var connections: [SimulatedConnection] = []
    /// With the mesh on, each side's mesh decisions.
    var meshes: [MeshStateMachine<SimulatedConnection>]?
    /// Invitations to a side's listener held until their introduction (mesh).
    var held: [(side: Int, inviter: Int, connection: SimulatedConnection)] = []
    /// Mesh dials waiting for their retry timer: they fire once nothing else can happen (a backoff is
    /// long next to a message's way).
    var meshRetries: [(side: Int, retry: MeshStateMachine<SimulatedConnection>.Retry)] = []
    /// Once the mesh is whole, cut one of the links the mesh made (each end noticing in its own time).
    var cutsMeshLink = false
    /// What happened, in order, to print when an invariant fails.
    var trace: [String] = []
    /// Mesh: introductions naming a member at an address or port not its listener's.
    var misdirected = 0
    /// Mesh: introductions left for a later MEMBERS because the introducer had enough dials under way.
    var deferredDials = 0
    /// Mesh: invitations to a listener held until their introduction came, then accepted.
    var acceptedOnceIntroduced = 0
    /// Mesh: members dialled again after their link was lost.
    var redials = 0
    /// Mesh: invitations to a listener declined because no introduction came.
    var refusedAtListener = 0

    init(
        peers: [PeerID],
        seed: UInt64,
        maximumPeers: Int = 16,
        reconnectionWindow: Duration? = nil,
        joinsMesh: Bool = false,
        maximumDialsPerIntroducer: Int = 4
    ) {
        self.peers = peers
        if joinsMesh {
            self.meshes = peers.indices.map { side in
                var mesh = MeshStateMachine<SimulatedConnection>(
                    localPeer: peers[side],
                    maximumDialsPerIntroducer: maximumDialsPerIntroducer
                )
                _ = mesh.listenerBound(port: Self.listenerPort(of: side))
                return mesh
            }
        }
        self.tables = peers.map {
            Table(localPeer: $0, maximumPeers: maximumPeers, reconnectionWindow: reconnectionWindow)
        }
        self.delivered = peers.map { _ in [] }
        self.accepted = peers.map { _ in [] }
        self.reported = peers.map { _ in [] }
        self.generator = SplitMix64(seed: seed)
    }

    /// Queues an application step: `side` invites `peer`.
    mutating func invite(from side: Int, to peer: Int) {
        inFlight.append(("app-\(side)-\(peer)-\(inFlight.count)", [.invite(from: side, to: peer)]))
    }

    /// Queues a cut of the first connection between two sides once it exists (taken in a random order).
    ///
    /// - Parameter onceConnected: wait until both sides hold each other connected over it, with links
    ///   that resume (each has the other's RESUME-SECRET and session listener).
    mutating func cutFirstConnection(onceConnected: Bool = false) {
        cutsOnlyConnected = onceConnected
        inFlight.append(("cut", []))
    }

    /// Queues `count` messages from `side` to `peer`, in order, each sent when its turn comes.
    mutating func send(_ count: Int, from side: Int, to peer: Int) {
        inFlight.append(("send-\(side)", (0..<count).map { .send(from: side, to: peer, index: $0) }))
    }

    /// Runs every step to the end, in an order drawn from the seed; then lets the replacement grace
    /// periods run out and runs what follows.
    mutating func run() {
        var budget = 10_000
        while budget > 0 {
            budget -= 1
            if let index = pickReady() {
                let step = inFlight[index].steps.removeFirst()
                if inFlight[index].steps.isEmpty, inFlight[index].key != "cut" { inFlight.remove(at: index) }
                perform(step)
                settleDeclines()
                continue
            }
            inFlight.removeAll { $0.key == "cut" }
            if !windows.isEmpty {
                let ended = windows
                windows = []
                for (side, peer, generation) in ended {
                    let id = peers[peer]
                    _ = record(side) { $0.giveUp(id, generation: generation, reason: .reconnectionFailed) }
                }
                continue
            }
            if !meshRetries.isEmpty {
                fireMeshRetries()
                continue
            }
            if !held.isEmpty {
                expireHolds()
                continue
            }
            guard !awaitingReplacement.isEmpty else { return }
            let expired = awaitingReplacement
            awaitingReplacement = []
            for (side, peer) in expired {
                let id = peers[peer]
                record(side) { _ = $0.replacementExpired(id) }
            }
            settleDeclines()
        }
    }

    // MARK: - Scheduling

    private mutating func pickReady() -> Int? {
        var ready = inFlight.indices.filter { !inFlight[$0].steps.isEmpty }
        if cutsMeshLink, let link = meshLinkToCut() {
            cutsMeshLink = false
            inFlight.append(("cut-mesh", [.cut(link)]))
            ready.append(inFlight.count - 1)
        }
        if let cut = inFlight.firstIndex(where: { $0.key == "cut" }), let first = connections.first,
            !first.cut, first.closed.values.contains(false),
            !cutsOnlyConnected
                || (0..<peers.count).allSatisfy({ Self.holdsResumable(tables[$0], peers[1 - $0], over: first) })
        {
            inFlight[cut].steps = [.cut(first)]
            ready.append(cut)
        }
        guard !ready.isEmpty else { return nil }
        return ready[Int(generator.next() % UInt64(ready.count))]
    }

    mutating func send(_ frame: Frame, on connection: SimulatedConnection, from side: Int) {
        guard !connection.cut else { return }
        let to = connection.other(than: side)
        let key = "\(connection.number)-\(side)"
        if let index = inFlight.firstIndex(where: { $0.key == key }) {
            inFlight[index].steps.append(.arrive(connection, to: to, frame))
        } else {
            inFlight.append((key, [.arrive(connection, to: to, frame)]))
        }
    }

    // MARK: - Each side, as the session reacts

    mutating func record<R, Failure: Error>(
        _ side: Int,
        _ body: (inout Table) throws(Failure) -> R
    ) throws(Failure) -> R {
        defer { reported[side] += tables[side].takeChanges() }
        return try body(&tables[side])
    }

    private mutating func perform(_ step: Step) {
        trace.append("\(step)")
        switch step {
        case .invite(let side, let peer):
            let id = peers[peer]
            do {
                try record(side) { table throws(SessionError) in try table.reserve(id) }
            } catch {
                return
            }
            let connection = SimulatedConnection(number: nextNumber, inviter: side, invitee: peer)
            nextNumber += 1
            connections.append(connection)
            send(.invite, on: connection, from: side)
            inFlight.append(("attach-\(connection.number)", [.attach(connection, at: side, to: peer)]))

        case .attach(let connection, let side, let peer):
            let id = peers[peer]
            if !record(side, { $0.attach(connection, to: id) }) {
                close(connection, at: side, .localDisconnect)
                return
            }
            // `invite` goes on waiting for the establishment, which may have failed already.
            if connection.closed[side] == true, !connection.lostTieBreak,
                !tables[side].isHeld(id, overAnotherThan: connection)
            {
                let reason = connection.closeReason[side] ?? .connectionLost
                _ = record(side) { $0.release(id, connection: connection, reason: reason) }
            }

        case .cut(let connection):
            connection.cut = true
            for queue in inFlight where queue.key.hasPrefix("\(connection.number)-") {
                lostInFlight +=
                    queue.steps.filter {
                        if case .arrive(_, _, .data) = $0 { return true }
                        return false
                    }.count
            }
            inFlight.removeAll { $0.key.hasPrefix("\(connection.number)-") }
            if tables[0].reconnectionWindow == nil, meshes == nil {
                for side in [connection.inviter, connection.invitee] where connection.closed[side] == false {
                    closed(connection, at: side, .connectionLost)
                }
            } else {
                // Each end notices in its own time (its liveness timeout), in an order drawn from the seed.
                for side in [connection.inviter, connection.invitee] {
                    inFlight.append(("notice-\(connection.number)-\(side)", [.notice(connection, at: side)]))
                }
            }

        case .notice(let connection, let side):
            closed(connection, at: side, .connectionLost)

        case .send(let side, let peer, let index):
            sendData(index, from: side, to: peer)

        case .meshDial(let side, let peer):
            meshDial(from: side, to: peer)

        case .acceptMember(let connection, let side, let peer):
            guard connection.closed[side] == false else { return }
            answerInvitation(on: connection, at: side, from: peer)

        case .ackTimer(let connection, let side):
            let id = peers[connection.other(than: side)]
            guard let count = record(side, { $0.ackDue(to: id, on: connection) }) else { return }
            send(.ack(count), on: connection, from: side)

        case .arrive(let connection, let side, let frame):
            guard connection.closed[side] == false else { return }
            let peer = connection.other(than: side)
            let id = peers[peer]
            switch frame {
            case .invite:
                send(.hello, on: connection, from: side)
                if connection.toListener {
                    meshInvitation(on: connection, at: side, from: peer)
                } else {
                    answerInvitation(on: connection, at: side, from: peer)
                }
            case .hello:
                connection.answered = true
                identified(peer, on: connection, at: side)
            case .accept:
                meshDialEnded(connection, at: side, .connected)
                if record(side, { $0.established(id, on: connection) }) == nil {
                    close(connection, at: side, .unexpectedPeer)
                } else {
                    startLink(to: peer, on: connection, at: side)
                }
            case .decline(let reason), .goodbye(let reason):
                closed(connection, at: side, reason == .localDisconnect ? .peerDisconnected : reason)
            case .cut:
                break
            case .resumeSecret(let secret):
                _ = record(side) { $0.firstFrame(from: id, on: connection, resumeSecret: secret) }
            case .listener:
                let host = "side-\(peer)"
                record(side) { $0.resumeEndpoint(host: host, port: 1, of: id, on: connection) }
                meshLearned(peer, over: connection, at: side)
            case .members(let members):
                meshIntroduced(members, by: peer, over: connection, at: side)
            case .data(let index):
                received(index, from: peer, on: connection, at: side)
            case .ack(let count):
                // The session's own decision; the waiters it wakes are none here (no limit on what is kept).
                let outcome = record(side) { $0.acknowledged(count, from: id, on: connection) }
                if let violation = outcome.violation { violations.append("side \(side): \(violation)") }
            case .resume(let secret, let nextExpected):
                resumeRequested(by: peer, secret: secret, peerExpects: nextExpected, on: connection, at: side)
            case .resumed(let nextExpected):
                resumed(peer, peerExpects: nextExpected, on: connection, at: side)
            }
        }
    }

    mutating func answerInvitation(on connection: SimulatedConnection, at side: Int, from peer: Int) {
        if declines.contains([side, peer]) {
            decline(connection, at: side, .declined)
            return
        }
        let id = peers[peer]
        let admission: Table.Admission
        do {
            admission = try record(side) { table throws(SessionError) in
                try table.invitation(from: id, on: connection)
            }
        } catch {
            decline(connection, at: side, .declined)
            return
        }
        switch admission {
        case .admitted:
            break
        case .supersedes(let ours):
            if let ours { close(ours, at: side, .duplicate) }
        case .duplicate:
            pendingDeclines.append((side, connection, peer))
            return
        }
        // The invitee counts the peer in before ACCEPT leaves.
        connection.ownedBy.insert(side)
        if record(side, { $0.established(id, on: connection) }) == nil {
            close(connection, at: side, .unexpectedPeer)
            return
        }
        send(.accept, on: connection, from: side)
        startLink(to: peer, on: connection, at: side)
    }

    private mutating func identified(_ peer: Int, on connection: SimulatedConnection, at side: Int) {
        let id = peers[peer]
        switch record(side, { $0.identified(id, on: connection) }) {
        case .proceed(let replaced):
            if let replaced { close(replaced, at: side, .duplicate) }
        case .refuse:
            close(connection, at: side, .localDisconnect)
        case .lostTieBreak:
            connection.lostTieBreak = true
            close(connection, at: side, .duplicate)
        }
    }

    /// An invitation left unanswered (``SessionStateMachine/Admission/duplicate``) is declined once the
    /// peer is connected through the other one, or gone.
    private mutating func settleDeclines() {
        var index = 0
        while index < pendingDeclines.count {
            let (side, connection, peer) = pendingDeclines[index]
            if tables[side][peers[peer]]?.state != .connecting {
                pendingDeclines.remove(at: index)
                decline(connection, at: side, .duplicate)
            } else {
                index += 1
            }
        }
    }

    mutating func decline(_ connection: SimulatedConnection, at side: Int, _ reason: DisconnectReason) {
        guard connection.closed[side] == false else { return }
        send(.decline(reason), on: connection, from: side)
        closed(connection, at: side, reason)
    }

    private mutating func close(_ connection: SimulatedConnection, at side: Int, _ reason: DisconnectReason) {
        guard connection.closed[side] == false else { return }
        send(.goodbye(reason), on: connection, from: side)
        closed(connection, at: side, reason)
    }

    /// The connection closed at `side` (the `.closed` event): a duplicate's replacement is awaited,
    /// otherwise the peer is released if this connection held it.
    private mutating func closed(_ connection: SimulatedConnection, at side: Int, _ reason: DisconnectReason) {
        guard connection.closed[side] == false else { return }
        connection.closed[side] = true
        connection.closeReason[side] = reason
        trace.append("  closed \(connection) at \(side): \(reason)")
        meshes?[side].closed(connection)
        meshDialEnded(connection, at: side, .failed(reason))
        guard connection.ownedBy.contains(side) else { return }
        // A mesh dial that was never answered held nothing (`invite` releases only `error.peer`).
        if connection.toListener, side == connection.inviter, !connection.answered { return }
        let peer = connection.other(than: side)
        let id = peers[peer]
        switch record(side, { $0.dropped(id, connection: connection, reason: reason) }) {
        case .report:
            break
        case .keep:
            return
        case .reconnect(let generation, let dial, let pending):
            windows.append((side, peer, generation))
            if let pending {
                acceptResume(pending, from: peer, at: side)
            }
            if let dial {
                let resumer = SimulatedConnection(number: nextNumber, inviter: side, invitee: peer)
                nextNumber += 1
                resumer.resumes = true
                resumer.ownedBy = []
                connections.append(resumer)
                let nextExpected = tables[side].nextExpected(from: id, generation: generation) ?? 0
                send(.resume(secret: dial.secret, nextExpected: nextExpected), on: resumer, from: side)
            }
            return
        }
        if reason == .duplicate, record(side, { $0.closedAsDuplicate(id, connection: connection) }) {
            awaitingReplacement.append((side, peer))
            return
        }
        if record(side, { $0.release(id, connection: connection, reason: reason) }) != nil {
            meshPeerLost(peer, at: side, reason: reason)
        }
    }
}

// MARK: - Reconnection

extension SessionSimulation {
    static func holdsResumable(_ table: Table, _ peer: PeerID, over connection: SimulatedConnection) -> Bool {
        table.connectedConnection(to: peer) === connection && table[peer]?.link?.isResumable == true
            && table[peer]?.link?.endpoint != nil
    }

    /// A message's frame: its index in four bytes.
    static func frame(_ index: Int) -> EncodedFrame {
        EncodedFrame(head: ByteBuffer(integer: UInt32(index)))
    }

    static func index(of frame: EncodedFrame) -> Int {
        Int(frame.head.getInteger(at: frame.head.readerIndex, as: UInt32.self) ?? 0)
    }

    /// A new link: with reconnection on, RESUME-SECRET first; with reconnection or the mesh, the
    /// session listener.
    fileprivate mutating func startLink(to peer: Int, on connection: SimulatedConnection, at side: Int) {
        let resumes = tables[side].reconnectionWindow != nil
        if resumes {
            let id = peers[peer]
            let link = Table.Link()
            tables[side][id]?.link = link
            send(.resumeSecret(link.localSecret), on: connection, from: side)
        }
        let meshPort = meshes?[side].established(connection)
        if resumes || meshPort != nil { send(.listener, on: connection, from: side) }
    }

    /// The session's `sendResumable`, through the table's own decision: refused when not connected, else
    /// numbered and kept by the ledger, and written if the link is up (or written plainly, before a link).
    fileprivate mutating func sendData(_ index: Int, from side: Int, to peer: Int) {
        let id = peers[peer]
        let frame = Self.frame(index)
        let decision = try? record(side) { table throws(SessionError) in
            try table.sendResumable(frame, to: id, limit: Int.max)
        }
        switch decision {
        case .plain(let connection):
            accepted[side].append(index)
            send(.data(index), on: connection, from: side)
        case .numbered(let live):
            accepted[side].append(index)
            if let live { send(.data(index), on: live, from: side) }
        case .full, nil:
            break
        }
    }

    fileprivate mutating func received(_ index: Int, from peer: Int, on connection: SimulatedConnection, at side: Int) {
        let id = peers[peer]
        let (action, _) = record(side) { $0.receivedMessage(bytes: 4, from: id, on: connection) }
        guard let action else { return }
        delivered[side].append(index)
        switch action {
        case .deliverAndAck(let count):
            send(.ack(count), on: connection, from: side)
        case .deliverAndArmAckTimer:
            inFlight.append(("ack-\(connection.number)-\(side)-\(index)", [.ackTimer(connection, at: side)]))
        case .deliver:
            break
        }
    }

    fileprivate mutating func resumeRequested(
        by peer: Int,
        secret: [UInt8],
        peerExpects: UInt64,
        on connection: SimulatedConnection,
        at side: Int
    ) {
        let id = peers[peer]
        pendingExpectations[connection.number] = peerExpects
        switch record(side, { $0.resumeRequested(by: id, secret: secret, on: connection) }) {
        case .refuse:
            decline(connection, at: side, .resumeRefused)
        case .accept:
            acceptResume(connection, from: peer, at: side)
        case .closeOld(let old):
            old.cut = true
            closed(old, at: side, .connectionLost)
        }
    }

    /// RESUMED goes out, then the link resumes on this side (and what the peer lacks follows).
    fileprivate mutating func acceptResume(_ connection: SimulatedConnection, from peer: Int, at side: Int) {
        let id = peers[peer]
        guard let nextExpected = tables[side][id]?.link?.ledger.nextExpected else {
            decline(connection, at: side, .resumeRefused)
            return
        }
        connection.ownedBy.insert(side)
        send(.resumed(nextExpected: nextExpected), on: connection, from: side)
        resumedHere(peer, peerExpects: pendingExpectations[connection.number] ?? 0, on: connection, at: side)
    }

    fileprivate mutating func resumed(
        _ peer: Int,
        peerExpects: UInt64,
        on connection: SimulatedConnection,
        at side: Int
    ) {
        connection.ownedBy.insert(side)
        resumedHere(peer, peerExpects: peerExpects, on: connection, at: side)
    }

    private mutating func resumedHere(
        _ peer: Int,
        peerExpects: UInt64,
        on connection: SimulatedConnection,
        at side: Int
    ) {
        let id = peers[peer]
        switch record(side, { $0.resumed(id, peerExpects: peerExpects, on: connection) }) {
        case .resumed(_, let again):
            sentAgain += again.count
            for frame in again { send(.data(Self.index(of: frame)), on: connection, from: side) }
        case .refused(let reason):
            close(connection, at: side, reason)
        }
    }
}
