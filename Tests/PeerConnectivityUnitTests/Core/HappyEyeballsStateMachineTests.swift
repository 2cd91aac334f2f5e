import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

@Suite("Happy Eyeballs: which address when, and who wins")
struct HappyEyeballsStateMachineTests {
    typealias Machine = HappyEyeballsStateMachine<String>
    typealias Candidate = Machine.Candidate

    static let v6a = Candidate("fd00::1", .ipv6)
    static let v6b = Candidate("fe80::1%eth0", .ipv6)
    static let v4a = Candidate("10.0.0.1", .ipv4)
    static let v4b = Candidate("192.0.2.7", .ipv4)
    static let delay = Duration.milliseconds(250)

    @Test("IPv6 first, the families interleaved, each in its given order, duplicates once")
    func ordering() {
        #expect(Machine.ordered([Self.v4a, Self.v4b, Self.v6a, Self.v6b]) == [Self.v6a, Self.v4a, Self.v6b, Self.v4b])
        #expect(Machine.ordered([Self.v4a, Self.v6a, Self.v4b]) == [Self.v6a, Self.v4a, Self.v4b])
        #expect(Machine.ordered([Self.v6b, Self.v6a]) == [Self.v6b, Self.v6a])
        #expect(Machine.ordered([Self.v4b, Self.v4a, Self.v4b]) == [Self.v4b, Self.v4a])
        #expect(Machine.ordered([]) == [])
    }

    @Test("attempts start 250 ms apart while none answers, and the first to connect wins")
    func staggeredAttempts() {
        var machine = Machine(candidates: [Self.v4a, Self.v6a, Self.v4b])
        #expect(machine.start() == [.connect("fd00::1"), .scheduleNextAttempt(after: Self.delay, generation: 1)])
        #expect(
            machine.timerFired(generation: 1) == [
                .connect("10.0.0.1"), .scheduleNextAttempt(after: Self.delay, generation: 2),
            ]
        )
        // The last address: no timer after it.
        #expect(machine.timerFired(generation: 2) == [.connect("192.0.2.7")])
        #expect(machine.inFlight == ["fd00::1", "10.0.0.1", "192.0.2.7"])
        // The second attempt connects first: it wins; the others, connecting later, are closed.
        #expect(machine.attemptConnected("10.0.0.1") == [.succeed("10.0.0.1")])
        #expect(machine.winner == "10.0.0.1")
        #expect(machine.attemptConnected("fd00::1") == [.close("fd00::1")])
        #expect(machine.attemptFailed("192.0.2.7") == [])
        #expect(machine.isFinished)
    }

    @Test("a failure starts the next attempt at once when nothing else is trying")
    func failureStartsNextAtOnce() {
        var machine = Machine(candidates: [Self.v6a, Self.v4a, Self.v6b])
        #expect(machine.start() == [.connect("fd00::1"), .scheduleNextAttempt(after: Self.delay, generation: 1)])
        #expect(
            machine.attemptFailed("fd00::1") == [
                .connect("10.0.0.1"), .scheduleNextAttempt(after: Self.delay, generation: 2),
            ]
        )
        // The timer replaced by that one fires late: nothing happens.
        #expect(machine.timerFired(generation: 1) == [])
        #expect(machine.timerFired(generation: 2) == [.connect("fe80::1%eth0")])
        #expect(machine.attemptConnected("fe80::1%eth0") == [.succeed("fe80::1%eth0")])
        // The slower one connects afterwards, and goes.
        #expect(machine.attemptConnected("10.0.0.1") == [.close("10.0.0.1")])
    }

    @Test("a failure while another attempt is under way waits for the timer")
    func failureWithOthersInFlight() {
        var machine = Machine(candidates: [Self.v6a, Self.v4a, Self.v6b, Self.v4b])
        _ = machine.start()
        _ = machine.timerFired(generation: 1)
        #expect(machine.attemptFailed("10.0.0.1") == [])
        #expect(
            machine.timerFired(generation: 2) == [
                .connect("fe80::1%eth0"), .scheduleNextAttempt(after: Self.delay, generation: 3),
            ]
        )
        #expect(machine.pending == ["192.0.2.7"])
    }

    @Test("every address failing fails the dial once, with the timer disarmed")
    func allFail() {
        var machine = Machine(candidates: [Self.v6a, Self.v4a])
        _ = machine.start()
        // The last address starts at once; the timer armed for it is disarmed.
        #expect(machine.attemptFailed("fd00::1") == [.connect("10.0.0.1"), .cancelTimer])
        #expect(machine.attemptFailed("10.0.0.1") == [.fail])
        #expect(machine.isFinished && machine.winner == nil)
        #expect(machine.attemptFailed("10.0.0.1") == [])

        var overlapping = Machine(candidates: [Self.v6a, Self.v4a])
        _ = overlapping.start()
        _ = overlapping.timerFired(generation: 1)
        #expect(overlapping.attemptFailed("10.0.0.1") == [])
        #expect(overlapping.attemptFailed("fd00::1") == [.fail])
    }

    @Test("a win disarms a pending timer; no address at all fails at once")
    func winDisarmsAndEmptyFails() {
        var machine = Machine(candidates: [Self.v6a, Self.v4a])
        _ = machine.start()
        #expect(machine.attemptConnected("fd00::1") == [.cancelTimer, .succeed("fd00::1")])
        #expect(machine.timerFired(generation: 1) == [])
        #expect(machine.pending.isEmpty)

        var empty = Machine(candidates: [])
        #expect(empty.start() == [.fail])
        #expect(empty.start() == [])
    }

    @Test("an outcome for an address never tried closes it and changes nothing")
    func unknownOutcome() {
        var machine = Machine(candidates: [Self.v6a])
        #expect(machine.start() == [.connect("fd00::1")])
        #expect(machine.attemptConnected("10.9.9.9") == [.close("10.9.9.9")])
        #expect(machine.attemptFailed("10.9.9.9") == [])
        #expect(machine.attemptConnected("fd00::1") == [.succeed("fd00::1")])
    }

    @Test("seeded random orders: each address tried once, one winner, every other connection closed, or one failure")
    func randomOrders() {
        var random = SplitMix64(seed: 21)
        for _ in 0..<500 {
            let candidates = (0..<Int.random(in: 1...6, using: &random)).map { index in
                Candidate("a\(index)", Bool.random(using: &random) ? .ipv6 : .ipv4)
            }
            var machine = Machine(candidates: candidates)
            var armed: UInt64?
            var started: [String] = []
            var succeeded: [String] = []
            var closed: Set<String> = []
            var connected: Set<String> = []
            var failures = 0
            var actions = machine.start()
            for _ in 0..<100 {
                for action in actions {
                    switch action {
                    case .connect(let address): started.append(address)
                    case .scheduleNextAttempt(_, let generation): armed = generation
                    case .cancelTimer: armed = nil
                    case .succeed(let address): succeeded.append(address)
                    case .close(let address): closed.insert(address)
                    case .fail: failures += 1
                    }
                }
                let open = machine.inFlight.sorted()
                if open.isEmpty && armed == nil { break }
                if let generation = armed, open.isEmpty || Bool.random(using: &random) {
                    armed = nil
                    actions = machine.timerFired(generation: generation)
                } else if let address = open.randomElement(using: &random) {
                    if Bool.random(using: &random) {
                        connected.insert(address)
                        actions = machine.attemptConnected(address)
                    } else {
                        actions = machine.attemptFailed(address)
                    }
                }
            }
            #expect(machine.isFinished, "\(candidates)")
            #expect(Set(started).count == started.count)
            #expect(Set(started).isSubset(of: Set(candidates.map(\.address))))
            #expect(succeeded.count + failures == 1)
            if let winner = succeeded.first {
                #expect(machine.winner == winner)
                #expect(connected.subtracting([winner]) == closed)
            } else {
                #expect(connected.isEmpty && started.count == candidates.count)
            }
        }
    }
}
