import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

@testable import PeerConnectivity

/// The browser's decisions in memory: DNS-SD events, resolve outcomes and timer firings go in by hand,
/// and the actions that come out are checked. No daemon, no clock.
@Suite("Browser state machine")
struct BrowserStateMachineTests {
    /// Always the same number: 0 takes no jitter off a delay, `.max` takes nearly all it may.
    struct FixedRandom: RandomNumberGenerator {
        var value: UInt64 = 0
        mutating func next() -> UInt64 { value }
    }

    /// An action reduced to what the tests compare.
    enum Did: Equatable {
        case resolve(interface: UInt32)
        case cancelResolve
        case scheduleRetry(Duration, failures: Int)
        case cancelRetry
        case found(PeerID)
        case lost(PeerID)
        case endpointChanged(port: Int)
        case stillUnresolved(failures: Int)
        case ignore
    }

    typealias Machine = BrowserStateMachine<FixedRandom>

    static let name = "0a1b2c3d-peer"

    static func instance(on interface: UInt32, name: String = name) -> DNSServiceInstance {
        DNSServiceInstance(name: name, type: "_chat._tcp.", domain: "local.", interfaceIndex: interface)
    }

    static func resolved(_ peer: PeerID, port: Int, info: [String: String] = [:]) -> Machine.Resolved {
        Machine.Resolved(record: DiscoveryRecord(peer: peer, discoveryInfo: info), host: "alice.local", port: port)
    }

    static func did(_ actions: [Machine.Action]) -> [Did] {
        actions.map { action in
            switch action {
            case .resolve(let instance, _): .resolve(interface: instance.interfaceIndex)
            case .cancelResolve: .cancelResolve
            case .scheduleRetry(_, let delay, _, let failures): .scheduleRetry(delay, failures: failures)
            case .cancelRetry: .cancelRetry
            case .yieldFound(let record): .found(record.peer)
            case .yieldLost(let peer): .lost(peer)
            case .endpointChanged(_, _, let port): .endpointChanged(port: port)
            case .stillUnresolved(_, let failures): .stillUnresolved(failures: failures)
            case .ignore: .ignore
            }
        }
    }

    /// The generation of the (one) resolve or retry timer among `actions`.
    static func generation(_ actions: [Machine.Action], sourceLocation: SourceLocation = #_sourceLocation) -> UInt64 {
        for action in actions {
            switch action {
            case .resolve(_, let generation), .scheduleRetry(_, _, let generation, _): return generation
            default: continue
            }
        }
        Issue.record("no resolve or retry in \(did(actions))", sourceLocation: sourceLocation)
        return 0
    }

    @Test("a resolve that fails twice, then works, finds the peer once; the second ADD of an interface does nothing")
    func failsTwiceThenWorks() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        #expect(Self.did(actions) == [.resolve(interface: 2)])
        let ipv6 = machine.added(Self.instance(on: 2))
        #expect(Self.did(ipv6) == [])

        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.scheduleRetry(.milliseconds(500), failures: 1)])
        actions = machine.retryTimerFired(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.resolve(interface: 2)])
        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.scheduleRetry(.seconds(1), failures: 2)])
        actions = machine.retryTimerFired(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.resolve(interface: 2)])
        let resolve = Self.generation(actions)
        actions = machine.resolved(name: Self.name, generation: resolve, Self.resolved(alice, port: 4000))
        #expect(Self.did(actions) == [.found(alice)])
        #expect(machine.foundPeers == [alice: [:]])

        // The same outcome again (a duplicate callback) and more ADDs find nothing more.
        let again = machine.resolved(name: Self.name, generation: resolve, Self.resolved(alice, port: 4000))
        #expect(Self.did(again) == [])
        let other = machine.added(Self.instance(on: 3))
        #expect(Self.did(other) == [])
    }

    @Test("the last REMOVE during the backoff cancels the retry; its timer firing late resolves nothing")
    func removalDuringBackoff() throws {
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        _ = machine.added(Self.instance(on: 2))
        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(actions))
        let timer = Self.generation(actions)
        let firstRemove = machine.removed(Self.instance(on: 2))
        #expect(Self.did(firstRemove) == [], "one IP version is still there")
        let lastRemove = machine.removed(Self.instance(on: 2))
        #expect(Self.did(lastRemove) == [.cancelRetry])
        let fired = machine.retryTimerFired(name: Self.name, generation: timer)
        #expect(Self.did(fired) == [])
        let extra = machine.removed(Self.instance(on: 2))
        #expect(Self.did(extra) == [])
        #expect(machine.foundPeers.isEmpty)
    }

    @Test("the outcome of a resolve cancelled by a REMOVE is ignored, even after the instance comes back")
    func lateResultIgnored() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        let first = machine.added(Self.instance(on: 2))
        let removal = machine.removed(Self.instance(on: 2))
        #expect(Self.did(removal) == [.cancelResolve])
        let second = machine.added(Self.instance(on: 2))
        #expect(Self.did(second) == [.resolve(interface: 2)])
        #expect(Self.generation(second) != Self.generation(first))

        let late = machine.resolved(name: Self.name, generation: Self.generation(first), Self.resolved(alice, port: 1))
        #expect(Self.did(late) == [])
        let lateFailure = machine.resolveFailed(name: Self.name, generation: Self.generation(first))
        #expect(Self.did(lateFailure) == [])
        #expect(machine.foundPeers.isEmpty)
        let current = machine.resolved(
            name: Self.name,
            generation: Self.generation(second),
            Self.resolved(alice, port: 2)
        )
        #expect(Self.did(current) == [.found(alice)])
        #expect(machine.endpoint(of: alice)?.port == 2)
    }

    @Test("a timer of an earlier backoff, firing after a new interface cut it short, resolves nothing")
    func newInterfaceDuringBackoff() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(actions))
        let timer = Self.generation(actions)

        let sighting = machine.added(Self.instance(on: 5))
        #expect(Self.did(sighting) == [.cancelRetry, .resolve(interface: 5)])
        let fired = machine.retryTimerFired(name: Self.name, generation: timer)
        #expect(Self.did(fired) == [], "the retry was superseded")

        // It fails on interface 5 too: the backoff goes on from 1 failure, and the retry goes round to 2.
        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(sighting))
        #expect(Self.did(actions) == [.scheduleRetry(.seconds(1), failures: 2)])
        actions = machine.retryTimerFired(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.resolve(interface: 2)])
        actions = machine.resolved(
            name: Self.name,
            generation: Self.generation(actions),
            Self.resolved(alice, port: 7)
        )
        #expect(Self.did(actions) == [.found(alice)])
        #expect(machine.endpoint(of: alice)?.interfaces == [2, 5])
    }

    @Test("a stale address is resolved again: a new port replaces it quietly, a new record is lost and found")
    func staleEndpoint() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        actions = machine.resolved(
            name: Self.name,
            generation: Self.generation(actions),
            Self.resolved(alice, port: 4000)
        )
        #expect(Self.did(actions) == [.found(alice)])

        let stranger = try PeerID(displayName: "stranger")
        let unknown = machine.endpointStale(peer: stranger)
        #expect(Self.did(unknown) == [])
        let stale = machine.endpointStale(peer: alice)
        #expect(Self.did(stale) == [.resolve(interface: 2)])
        let twice = machine.endpointStale(peer: alice)
        #expect(Self.did(twice) == [], "one re-resolve at a time")
        #expect(machine.endpoint(of: alice)?.port == 4000, "the old address stays until a new one comes")

        actions = machine.resolved(
            name: Self.name,
            generation: Self.generation(stale),
            Self.resolved(alice, port: 4100)
        )
        #expect(Self.did(actions) == [.endpointChanged(port: 4100)])
        #expect(machine.endpoint(of: alice)?.port == 4100)
        #expect(machine.foundPeers == [alice: [:]])

        // Same address: nothing to say. A failed re-resolve keeps the address.
        let same = machine.endpointStale(peer: alice)
        actions = machine.resolved(name: Self.name, generation: Self.generation(same), Self.resolved(alice, port: 4100))
        #expect(Self.did(actions) == [])
        let failing = machine.endpointStale(peer: alice)
        actions = machine.resolveFailed(name: Self.name, generation: Self.generation(failing))
        #expect(Self.did(actions) == [])
        #expect(machine.endpoint(of: alice)?.port == 4100)

        // The discoveryInfo changed: the peer is lost and found again, with it.
        let changed = machine.endpointStale(peer: alice)
        actions = machine.resolved(
            name: Self.name,
            generation: Self.generation(changed),
            Self.resolved(alice, port: 4100, info: ["room": "red"])
        )
        #expect(Self.did(actions) == [.lost(alice), .found(alice)])
        #expect(machine.foundPeers == [alice: ["room": "red"]])
    }

    @Test("the REMOVE of a peer being re-resolved cancels that resolve and loses the peer")
    func removalDuringReresolve() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        actions = machine.resolved(name: Self.name, generation: Self.generation(actions), Self.resolved(alice, port: 1))
        let stale = machine.endpointStale(peer: alice)
        let removal = machine.removed(Self.instance(on: 2))
        #expect(Self.did(removal) == [.cancelResolve, .lost(alice)])
        actions = machine.resolved(name: Self.name, generation: Self.generation(stale), Self.resolved(alice, port: 2))
        #expect(Self.did(actions) == [])
        #expect(machine.endpoint(of: alice) == nil)
    }

    @Test("delays double from 0.5 s to at most 8 s, less at most a quarter of jitter; one warning after 4 failures")
    func backoffGrowsAndIsCapped() throws {
        for (random, expected) in [
            (UInt64(0), [0.5, 1, 2, 4, 8, 8, 8, 8]),
            (UInt64.max, [0.375, 0.75, 1.5, 3, 6, 6, 6, 6]),
        ] {
            var machine = Machine(random: FixedRandom(value: random))
            var actions = machine.added(Self.instance(on: 2))
            var delays: [Double] = []
            var warnings: [Int] = []
            for _ in expected {
                actions = machine.resolveFailed(name: Self.name, generation: Self.generation(actions))
                for case .scheduleRetry(_, let delay, _, _) in actions {
                    delays.append(Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
                }
                for case .stillUnresolved(_, let failures) in actions { warnings.append(failures) }
                actions = machine.retryTimerFired(name: Self.name, generation: Self.generation(actions))
            }
            #expect(zip(delays, expected).allSatisfy { abs($0 - $1) < 0.001 }, "\(delays)")
            #expect(delays.count == expected.count)
            #expect(warnings == [4])
        }
        let backoff = ResolveBackoff.standard
        #expect(backoff.delay(afterFailures: 1_000_000, random: 0) == .seconds(8))
        #expect(backoff.delay(afterFailures: 0, random: 0) == .milliseconds(500))
    }

    @Test(
        "a record naming no valid peer is ignored until the instance goes; a found peer whose record turns bad is lost"
    )
    func rejectedRecords() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        var actions = machine.added(Self.instance(on: 2))
        actions = machine.recordRejected(name: Self.name, generation: Self.generation(actions))
        #expect(Self.did(actions) == [.ignore])
        let sighting = machine.added(Self.instance(on: 3))
        #expect(Self.did(sighting) == [], "no resolve of an ignored instance, on any interface")
        _ = machine.removed(Self.instance(on: 2))
        _ = machine.removed(Self.instance(on: 3))
        actions = machine.added(Self.instance(on: 2))
        #expect(Self.did(actions) == [.resolve(interface: 2)], "it came back: a new chance")

        actions = machine.resolved(name: Self.name, generation: Self.generation(actions), Self.resolved(alice, port: 1))
        let stale = machine.endpointStale(peer: alice)
        actions = machine.recordRejected(name: Self.name, generation: Self.generation(stale))
        #expect(Self.did(actions) == [.lost(alice), .ignore])
        #expect(machine.foundPeers.isEmpty)
    }

    @Test("stop cancels every resolve and timer; nothing after it does anything")
    func stopCancelsEverything() throws {
        let alice = try PeerID(displayName: "alice")
        var machine = Machine(random: FixedRandom())
        let resolving = machine.added(Self.instance(on: 2, name: "resolving"))
        let waiting = machine.added(Self.instance(on: 2, name: "waiting"))
        let timer = machine.resolveFailed(name: "waiting", generation: Self.generation(waiting))
        let found = machine.added(Self.instance(on: 2, name: "found"))
        _ = machine.resolved(name: "found", generation: Self.generation(found), Self.resolved(alice, port: 1))

        let stop = machine.stop()
        #expect(Self.did(stop).filter { $0 == .cancelResolve }.count == 1)
        #expect(Self.did(stop).filter { $0 == .cancelRetry }.count == 1)
        #expect(Self.did(stop).count == 2)
        #expect(machine.foundPeers.isEmpty)
        let late = machine.resolved(
            name: "resolving",
            generation: Self.generation(resolving),
            Self.resolved(alice, port: 1)
        )
        #expect(Self.did(late) == [])
        let fired = machine.retryTimerFired(name: "waiting", generation: Self.generation(timer))
        #expect(Self.did(fired) == [])
        let added = machine.added(Self.instance(on: 3, name: "new"))
        #expect(Self.did(added) == [])
    }
}
