import Foundation
import PeerConnectivityCore
import Testing

@testable import PeerConnectivity

/// A mesh that heals (`MeshStateMachine+Healing.swift`): member dials tried again with backoff, lost
/// members dialled again; the machine alone, then eight sessions through ``SessionSimulation``.
@Suite("Mesh healing")
struct MeshHealingTests {
    private typealias Machine = MeshStateMachine<SimulatedConnection>

    private static func member(_ peer: PeerID, port: UInt16) -> Frame.Member {
        Frame.Member(peer: peer, address: [10, 0, 0, 2], port: port)
    }

    /// A machine for `low` that was introduced `high` and dials it.
    private static func dialing() -> (Machine, SimulatedConnection) {
        var machine = Machine(localPeer: OrderedPeers.low, maximumDialsPerIntroducer: 4)
        let introducer = SimulatedConnection(number: 1, inviter: 0, invitee: 2)
        _ = machine.introduced(member(OrderedPeers.high, port: 7000), by: introducer, isHeld: false)
        return (machine, introducer)
    }

    @Test("a failed dial is tried again after 0.5, 1, 2, 4 and 8 s, at the latest introduction, then given up")
    func retriesWithBackoff() {
        var (machine, introducer) = Self.dialing()
        var delays: [Duration] = []
        var retry = machine.dialEnded(OrderedPeers.high, .failed(.declined))
        while let due = retry {
            delays.append(due.delay)
            // A newer introduction names another port: the retry dials there.
            let port = UInt16(7000 + due.attempt)
            _ = machine.introduced(Self.member(OrderedPeers.high, port: port), by: introducer, isHeld: false)
            let target = machine.retryDue(OrderedPeers.high, generation: due.generation, isHeld: false)
            #expect(target?.port == port, "attempt \(due.attempt)")
            retry = machine.dialEnded(OrderedPeers.high, .failed(.connectionFailed))
        }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(delays.count == Machine.maximumDialAttempts - 1)
        // Given up: a new introduction starts over.
        let fresh = machine.introduced(Self.member(OrderedPeers.high, port: 7100), by: introducer, isHeld: false)
        guard case .dial = fresh else {
            Issue.record("a member given up on was not dialled at its next introduction")
            return
        }
    }

    @Test("no retry once connected, held, no longer introduced, or for a timer of an earlier generation")
    func retriesStop() {
        var (machine, introducer) = Self.dialing()
        #expect(machine.dialEnded(OrderedPeers.high, .connected) == nil)
        (machine, introducer) = Self.dialing()
        #expect(machine.dialEnded(OrderedPeers.high, .held) == nil)

        (machine, introducer) = Self.dialing()
        let retry = machine.dialEnded(OrderedPeers.high, .failed(.declined))
        #expect(retry != nil)
        // The member dialled this side meanwhile: the timer finds it held.
        #expect(machine.retryDue(OrderedPeers.high, generation: retry!.generation, isHeld: true) == nil)
        #expect(machine.pendingRetry(for: OrderedPeers.high) == nil)

        (machine, introducer) = Self.dialing()
        let second = machine.dialEnded(OrderedPeers.high, .failed(.declined))!
        #expect(machine.retryDue(OrderedPeers.high, generation: second.generation - 1, isHeld: false) == nil)
        // The introducer left: nobody vouches for the member any more.
        machine.closed(introducer)
        #expect(machine.retryDue(OrderedPeers.high, generation: second.generation, isHeld: false) == nil)

        (machine, introducer) = Self.dialing()
        let third = machine.dialEnded(OrderedPeers.high, .failed(.declined))!
        machine.close()
        #expect(machine.retryDue(OrderedPeers.high, generation: third.generation, isHeld: false) == nil)
    }

    @Test("a member whose link was lost is dialled again by the lower id; one that left is not")
    func lostMembersDialledAgain() {
        var (machine, _) = Self.dialing()
        _ = machine.dialEnded(OrderedPeers.high, .connected)
        #expect(machine.peerLost(OrderedPeers.high, reason: .peerDisconnected) == nil)
        #expect(machine.peerLost(OrderedPeers.high, reason: .declined) == nil)
        #expect(machine.peerLost(OrderedPeers.high, reason: .livenessTimeout)?.peer == OrderedPeers.high)
        // A dial is under way now: another loss report starts nothing more.
        #expect(machine.peerLost(OrderedPeers.high, reason: .connectionLost) == nil)
        _ = machine.dialEnded(OrderedPeers.high, .connected)
        #expect(machine.peerLost(OrderedPeers.high, reason: .connectionLost)?.peer == OrderedPeers.high)

        // The higher id waits for the other's dial.
        var high = Machine(localPeer: OrderedPeers.high, maximumDialsPerIntroducer: 4)
        let introducer = SimulatedConnection(number: 1, inviter: 0, invitee: 2)
        _ = high.introduced(Self.member(OrderedPeers.low, port: 7000), by: introducer, isHeld: true)
        #expect(high.peerLost(OrderedPeers.low, reason: .connectionLost) == nil)
        // Nobody introduced: nothing to dial.
        var alone = Machine(localPeer: OrderedPeers.low, maximumDialsPerIntroducer: 4)
        #expect(alone.peerLost(OrderedPeers.high, reason: .connectionLost) == nil)
    }

    @Test("eight sessions, one link the mesh made is cut once whole: the mesh is whole again, in every order")
    func cutLinkHeals() {
        var redials = 0
        for seed in UInt64(1)...80 {
            var world = MeshStateMachineTests.joiningWorld(seed: seed, count: 8)
            world.cutsMeshLink = true
            world.run()
            #expect(!world.cutsMeshLink, "seed \(seed): the mesh was never whole")
            let cut = world.connections.filter(\.cut)
            #expect(cut.count == 1, "seed \(seed)")
            MeshStateMachineTests.expectFullMesh(world, seed: seed, allowingLossOf: cut.first)
            redials += world.redials
        }
        #expect(redials >= 80, "every cut link was dialled again (\(redials) redials in 80 runs)")
    }
}
