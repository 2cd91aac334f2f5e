import Foundation
import PeerConnectivityCore
import Testing

@testable import PeerConnectivity

/// The session's peer table and its decisions, in memory: no sockets, no clock. The races run through
/// ``SessionSimulation``, one order of events per seed.
@Suite("Session state machine")
struct SessionStateMachineTests {
    private static let seeds: ClosedRange<UInt64> = 1...400

    @Test("a second place for the same peer, or one past the limit, is refused with the reason")
    func admissionLimits() throws {
        var table = SessionSimulation.Table(localPeer: OrderedPeers.low, maximumPeers: 1)
        try table.reserve(OrderedPeers.high)
        #expect(throws: SessionError.alreadyInSession(OrderedPeers.high)) { try table.reserve(OrderedPeers.high) }
        let third = try PeerID(displayName: "third")
        #expect(throws: SessionError.sessionFull(limit: 1)) { try table.reserve(third) }
        #expect(table.takeChanges().map(\.state) == [.connecting])
        #expect(table.release(OrderedPeers.high, connection: nil, reason: .declined) != nil)
        #expect(table.takeChanges().map(\.state) == [.notConnected])
        #expect(table.count == 0)
    }

    @Test("a duplicate's close keeps the peer connecting until its replacement comes, or its grace period ends")
    func replacementGracePeriod() throws {
        let first = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        let replacement = SimulatedConnection(number: 2, inviter: 1, invitee: 0)
        var table = SessionSimulation.Table(localPeer: OrderedPeers.low, maximumPeers: 4)
        try table.reserve(OrderedPeers.high)
        let attached = table.attach(first, to: OrderedPeers.high)
        let established = table.established(OrderedPeers.high, on: first)
        #expect(attached && established != nil)
        // The peer closes ours as a duplicate: connecting, held over nothing, not gone.
        let awaiting = table.closedAsDuplicate(OrderedPeers.high, connection: first)
        #expect(awaiting)
        #expect(table[OrderedPeers.high]?.state == .connecting && table[OrderedPeers.high]?.connection == nil)
        // Its invitation is the replacement: admitted, and the grace period's end changes nothing.
        guard case .admitted = try table.invitation(from: OrderedPeers.high, on: replacement) else {
            Issue.record("the awaited replacement was not admitted")
            return
        }
        let expiredEarly = table.replacementExpired(OrderedPeers.high)
        let replaced = table.established(OrderedPeers.high, on: replacement)
        #expect(expiredEarly == nil && replaced != nil)
        #expect(table.takeChanges().map(\.state) == [.connecting, .connected, .connecting, .connected])

        // Without a replacement, the grace period's end releases the peer, saying why.
        let awaitingAgain = table.closedAsDuplicate(OrderedPeers.high, connection: replacement)
        let expired = table.replacementExpired(OrderedPeers.high)
        #expect(awaitingAgain && expired?.awaitingReplacement == true)
        let changes = table.takeChanges()
        #expect(changes.map(\.state) == [.connecting, .notConnected])
        #expect(changes.last?.reason == .duplicate)
        #expect(table.count == 0)
    }

    @Test("the tie-break is the same seen from both sides")
    func tieBreakIsAntisymmetric() throws {
        typealias Table = SessionSimulation.Table
        #expect(Table.winsTieBreak(inviter: OrderedPeers.low, over: OrderedPeers.high))
        #expect(!Table.winsTieBreak(inviter: OrderedPeers.high, over: OrderedPeers.low))
        for _ in 0..<50 {
            let a = try PeerID(displayName: "a")
            let b = try PeerID(displayName: "b")
            #expect(Table.winsTieBreak(inviter: a, over: b) != Table.winsTieBreak(inviter: b, over: a))
        }
    }

    @Test("two peers inviting each other at once end connected over one connection, in every order")
    func crossingInvitations() {
        for first in [0, 1] {
            for seed in Self.seeds {
                var world = SessionSimulation(peers: [OrderedPeers.low, OrderedPeers.high], seed: seed)
                world.invite(from: first, to: 1 - first)
                world.invite(from: 1 - first, to: first)
                world.run()
                Self.expectConnected(world, seed: seed)
                for side in [0, 1] {
                    let states = world.reported[side].map(\.state)
                    #expect(!states.contains(.notConnected), "seed \(seed): side \(side) reported \(states)")
                }
            }
        }
    }

    @Test("a connection cut during the handshake leaves neither side holding the other")
    func dropDuringHandshake() {
        for seed in Self.seeds {
            var world = SessionSimulation(peers: [OrderedPeers.low, OrderedPeers.high], seed: seed)
            world.invite(from: seed.isMultiple(of: 2) ? 0 : 1, to: seed.isMultiple(of: 2) ? 1 : 0)
            world.cutFirstConnection()
            world.run()
            Self.expectApart(world, seed: seed)
        }
    }

    @Test("an invitation declined while the other side accepts the crossing one ends in agreement")
    func declineRacingAccept() {
        var outcomes: Set<String> = []
        for decliner in [0, 1] {
            for seed in Self.seeds {
                var world = SessionSimulation(peers: [OrderedPeers.low, OrderedPeers.high], seed: seed)
                world.declines = [[decliner, 1 - decliner]]
                world.invite(from: 0, to: 1)
                world.invite(from: 1, to: 0)
                world.run()
                if world.tables[0][OrderedPeers.high] != nil {
                    Self.expectConnected(world, seed: seed)
                    outcomes.insert("connected")
                } else {
                    Self.expectApart(world, seed: seed)
                    outcomes.insert("apart")
                }
            }
        }
        // Both endings happen: the declined invitation loses sometimes, and wins the tie-break other times.
        #expect(outcomes == ["connected", "apart"])
    }

    @Test("a link cut while messages cross resumes: every message arrives once, in order, with and without some lost")
    func resumeAfterDrop() {
        var lost = 0
        var none = 0
        // Fewer orders than the joins above: each carries 80 messages through a cut.
        for seed in Self.seeds.prefix(150) {
            var world = SessionSimulation(
                peers: [OrderedPeers.low, OrderedPeers.high],
                seed: seed,
                reconnectionWindow: .seconds(10)
            )
            world.invite(from: seed.isMultiple(of: 2) ? 0 : 1, to: seed.isMultiple(of: 2) ? 1 : 0)
            world.send(40, from: 0, to: 1)
            world.send(40, from: 1, to: 0)
            world.cutFirstConnection(onceConnected: true)
            world.run()
            #expect(world.connections.first?.cut == true, "seed \(seed): the link was never cut")
            Self.expectConnected(world, seed: seed)
            #expect(!world.accepted[0].isEmpty && !world.accepted[1].isEmpty, "seed \(seed)")
            #expect(world.delivered[1] == world.accepted[0], "seed \(seed): \(world.delivered[1])")
            #expect(world.delivered[0] == world.accepted[1], "seed \(seed): \(world.delivered[0])")
            #expect(world.sentAgain >= world.lostInFlight, "seed \(seed)")
            #expect(world.violations.isEmpty, "seed \(seed): \(world.violations)")
            if world.lostInFlight > 0 { lost += 1 } else { none += 1 }
        }
        // Both cases happen over the seeds: a cut that lost messages in flight, and one that lost none.
        #expect(lost > 0 && none > 0, "\(lost) runs lost messages, \(none) did not")
    }

    @Test("a link that drops before the dialling side learned the other's listener is reported gone at once")
    func dropBeforeTheListenerIsKnown() throws {
        let connection = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        var table = SessionSimulation.Table(
            localPeer: OrderedPeers.low,
            maximumPeers: 4,
            reconnectionWindow: .seconds(10)
        )
        try table.reserve(OrderedPeers.high)
        let attached = table.attach(connection, to: OrderedPeers.high)
        let established = table.established(OrderedPeers.high, on: connection)
        #expect(attached && established != nil)
        table[OrderedPeers.high]?.link = SessionSimulation.Table.Link()
        _ = table.firstFrame(from: OrderedPeers.high, on: connection, resumeSecret: Array(repeating: 7, count: 16))
        #expect(table[OrderedPeers.high]?.link?.isResumable == true)
        guard case .report = table.dropped(OrderedPeers.high, connection: connection, reason: .connectionLost) else {
            Issue.record("the lower peer id waits to dial a listener it does not know")
            return
        }
        // Knowing it, the same drop is resumed.
        table[OrderedPeers.high]?.link?.endpoint = ("192.0.2.1", 4000)
        guard
            case .reconnect(_, let dial, _) = table.dropped(
                OrderedPeers.high,
                connection: connection,
                reason: .connectionLost
            )
        else {
            Issue.record("a resumable link with a known listener is not re-established")
            return
        }
        #expect(dial?.host == "192.0.2.1" && dial?.port == 4000)
    }

    // MARK: - Invariants

    /// Both hold each other `connected`, over the same connection, the only one still open.
    private static func expectConnected(_ world: SessionSimulation, seed: UInt64) {
        let a = world.tables[0][world.peers[1]]
        let b = world.tables[1][world.peers[0]]
        #expect(
            a?.state == .connected && b?.state == .connected,
            "seed \(seed): \(String(describing: a?.state)) / \(String(describing: b?.state))\n\(world.trace.joined(separator: "\n"))"
        )
        #expect(a?.connection != nil && a?.connection === b?.connection, "seed \(seed): not the same connection")
        let open = world.connections.filter { $0.closed.values.contains(false) }
        #expect(open.count == 1 && open.first === a?.connection, "seed \(seed): open \(open)")
        for side in [0, 1] {
            #expect(world.reported[side].last?.state == .connected, "seed \(seed): side \(side)")
        }
    }

    /// Neither holds the other, no connection is left open, and each side's last report (if any) says gone.
    private static func expectApart(_ world: SessionSimulation, seed: UInt64) {
        #expect(
            world.tables[0].count == 0 && world.tables[1].count == 0,
            "seed \(seed)\n\(world.trace.joined(separator: "\n"))"
        )
        #expect(world.connections.allSatisfy { !$0.closed.values.contains(false) }, "seed \(seed)")
        for side in [0, 1] where !world.reported[side].isEmpty {
            #expect(world.reported[side].last?.state == .notConnected, "seed \(seed): side \(side)")
        }
    }
}
