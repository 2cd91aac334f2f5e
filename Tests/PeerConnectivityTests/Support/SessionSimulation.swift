import Foundation
import PeerConnectivityCore

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
/// handshake, a decline racing an accept). Each side reacts to a verdict as ``SessionCore`` does.
struct SessionSimulation {
    typealias Table = SessionStateMachine<SimulatedConnection, Never, Int>

    /// What crosses a connection, in order, one way.
    enum Frame {
        case invite
        case hello
        case accept
        case decline(DisconnectReason)
        case goodbye(DisconnectReason)
        case cut
    }

    /// Something a side does or receives: a frame arriving, or the application's own step.
    enum Step {
        case arrive(SimulatedConnection, to: Int, Frame)
        case invite(from: Int, to: Int)
        /// The dial returned: the session records its connection (HELLO may have come back already).
        case attach(SimulatedConnection, at: Int, to: Int)
        case cut(SimulatedConnection)
    }

    let peers: [PeerID]
    var tables: [Table]
    /// Per side, every state change reported, in order.
    var reported: [[Table.Change]]
    /// Invitations each side's application declines rather than accepts (by inviter).
    var declines: Set<[Int]> = []
    /// Frames in flight, per connection and direction (FIFO), and the application steps not yet taken.
    private var inFlight: [(key: String, steps: [Step])] = []
    private var pendingDeclines: [(side: Int, connection: SimulatedConnection, peer: Int)] = []
    private var awaitingReplacement: [(side: Int, peer: Int)] = []
    private var nextNumber = 1
    private var generator: SeededGenerator
    private(set) var connections: [SimulatedConnection] = []
    /// What happened, in order, to print when an invariant fails.
    private(set) var trace: [String] = []

    init(peers: [PeerID], seed: UInt64, maximumPeers: Int = 16) {
        self.peers = peers
        self.tables = peers.map { Table(localPeer: $0, maximumPeers: maximumPeers) }
        self.reported = peers.map { _ in [] }
        self.generator = SeededGenerator(seed: seed)
    }

    /// Queues an application step: `side` invites `peer`.
    mutating func invite(from side: Int, to peer: Int) {
        inFlight.append(("app-\(side)-\(peer)-\(inFlight.count)", [.invite(from: side, to: peer)]))
    }

    /// Queues a cut of the first connection between two sides once it exists (taken in a random order).
    mutating func cutFirstConnection() {
        inFlight.append(("cut", []))
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
        if let cut = inFlight.firstIndex(where: { $0.key == "cut" }), let first = connections.first,
            first.closed.values.contains(false)
        {
            inFlight[cut].steps = [.cut(first)]
            ready.append(cut)
        }
        guard !ready.isEmpty else { return nil }
        return ready[Int(generator.next() % UInt64(ready.count))]
    }

    private mutating func send(_ frame: Frame, on connection: SimulatedConnection, from side: Int) {
        let to = connection.other(than: side)
        let key = "\(connection.number)-\(side)"
        if let index = inFlight.firstIndex(where: { $0.key == key }) {
            inFlight[index].steps.append(.arrive(connection, to: to, frame))
        } else {
            inFlight.append((key, [.arrive(connection, to: to, frame)]))
        }
    }

    // MARK: - Each side, as the session reacts

    private mutating func record<R, Failure: Error>(
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
            for side in [connection.inviter, connection.invitee] where connection.closed[side] == false {
                closed(connection, at: side, .connectionLost)
            }
            inFlight.removeAll { $0.key.hasPrefix("\(connection.number)-") }

        case .arrive(let connection, let side, let frame):
            guard connection.closed[side] == false else { return }
            let peer = connection.other(than: side)
            let id = peers[peer]
            switch frame {
            case .invite:
                send(.hello, on: connection, from: side)
                answerInvitation(on: connection, at: side, from: peer)
            case .hello:
                identified(peer, on: connection, at: side)
            case .accept:
                if record(side, { $0.established(id, on: connection) }) == nil {
                    close(connection, at: side, .unexpectedPeer)
                }
            case .decline(let reason), .goodbye(let reason):
                closed(connection, at: side, reason == .localDisconnect ? .peerDisconnected : reason)
            case .cut:
                break
            }
        }
    }

    private mutating func answerInvitation(on connection: SimulatedConnection, at side: Int, from peer: Int) {
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

    private mutating func decline(_ connection: SimulatedConnection, at side: Int, _ reason: DisconnectReason) {
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
        guard connection.ownedBy.contains(side) else { return }
        let peer = connection.other(than: side)
        let id = peers[peer]
        if reason == .duplicate, record(side, { $0.closedAsDuplicate(id, connection: connection) }) {
            awaitingReplacement.append((side, peer))
            return
        }
        _ = record(side) { $0.release(id, connection: connection, reason: reason) }
    }
}

/// A small deterministic generator (SplitMix64): one seed, one order of events.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
