import Foundation
import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// Two ends of a UDP path, each with its machine, over a simulated link that loses a seeded share of the
/// datagrams each way and delays each by 1-3 ms: no socket and no clock, time is the simulation's.
private struct PathSimulation {
    typealias Machine = DatagramPathStateMachine

    /// What happens at a time.
    private enum Event {
        case timer(side: Int, generation: Int)
        case probeArrives(at: Int, sequence: UInt32)
        case answerArrives(at: Int, sequence: UInt32)
    }

    var machines = [Machine(), Machine()]
    /// When each side's verdict changed, and to what.
    var verdicts: [[(time: UInt64, verdict: Machine.Verdict)]] = [[], []]
    /// The share of datagrams lost from side i to the other.
    let loss: [Double]
    private var generator: SplitMix64
    private var queue: [(time: UInt64, order: Int, event: Event)] = []
    private var order = 0
    private var timerGenerations = [0, 0]
    /// The simulation's start, in nanoseconds (not 0, as a monotonic clock is not).
    static let origin: UInt64 = 5_000_000_000

    init(seed: UInt64, lossFromFirst: Double, lossFromSecond: Double) {
        generator = SplitMix64(seed: seed)
        loss = [lossFromFirst, lossFromSecond]
    }

    /// Runs both sides from their start (the second a few milliseconds later) until `end` nanoseconds
    /// after the origin.
    mutating func run(for end: UInt64 = 12_000_000_000) {
        let secondStart = Self.origin + UInt64.random(in: 0...5_000_000, using: &generator)
        apply(machines[0].start(now: Self.origin), side: 0, now: Self.origin)
        apply(machines[1].start(now: secondStart), side: 1, now: secondStart)
        while let index = queue.indices.min(by: {
            (queue[$0].time, queue[$0].order) < (queue[$1].time, queue[$1].order)
        }) {
            let (now, _, event) = queue.remove(at: index)
            guard now <= Self.origin + end else { break }
            switch event {
            case .timer(let side, let generation):
                guard generation == timerGenerations[side] else { continue }
                apply(machines[side].timerFired(now: now), side: side, now: now)
            case .probeArrives(let side, let sequence):
                machines[side].peerProbeArrived(sequence: sequence)
                send(.answerArrives(at: 1 - side, sequence: sequence), from: side, now: now)
            case .answerArrives(let side, let sequence):
                apply(machines[side].answerArrived(sequence: sequence, now: now), side: side, now: now)
            }
        }
    }

    private mutating func apply(_ step: Machine.Step, side: Int, now: UInt64) {
        if let verdict = step.verdict { verdicts[side].append((now, verdict)) }
        if let probe = step.probe { send(.probeArrives(at: 1 - side, sequence: probe), from: side, now: now) }
        switch step.timer {
        case .arm(let time):
            timerGenerations[side] += 1
            schedule(.timer(side: side, generation: timerGenerations[side]), at: time)
        case .disarm:
            timerGenerations[side] += 1
        case nil:
            break
        }
    }

    private mutating func send(_ event: Event, from side: Int, now: UInt64) {
        guard Double.random(in: 0..<1, using: &generator) >= loss[side] else { return }
        schedule(event, at: now + UInt64.random(in: 1_000_000...3_000_000, using: &generator))
    }

    private mutating func schedule(_ event: Event, at time: UInt64) {
        order += 1
        queue.append((time, order, event))
    }

    /// When `side` was first judged blocked, in nanoseconds after the origin, or nil.
    func blockedAfter(side: Int) -> UInt64? {
        verdicts[side].first { $0.verdict == .blocked }.map { $0.time - Self.origin }
    }
}

@Suite("Datagram path: probes with backoff, blocked only over a window the loss measured allows")
struct DatagramPathStateMachineTests {
    typealias Machine = DatagramPathStateMachine
    static let millisecond: UInt64 = 1_000_000
    static let second: UInt64 = 1_000_000_000

    @Test(
        "20 seeded runs each at 10 % and 30 % loss, both ways or only one: every side opens, none is ever blocked",
        arguments: [(0.1, 0.1), (0.3, 0.3), (0.1, 0.0), (0.3, 0.0), (0.0, 0.3)]
    )
    func lossyPathsOpen(loss: (Double, Double)) {
        for seed in UInt64(1)...20 {
            var simulation = PathSimulation(seed: seed, lossFromFirst: loss.0, lossFromSecond: loss.1)
            simulation.run()
            for side in 0..<2 {
                #expect(simulation.blockedAfter(side: side) == nil, "seed \(seed), loss \(loss): side \(side) blocked")
                #expect(simulation.machines[side].verdict == .open, "seed \(seed), loss \(loss): side \(side)")
            }
        }
    }

    @Test("every datagram dropped: both sides blocked between the 2 s floor and the 6 s ceiling", arguments: 1...20)
    func blockedWithinTheBound(seed: UInt64) {
        var simulation = PathSimulation(seed: seed, lossFromFirst: 1, lossFromSecond: 1)
        simulation.run()
        for side in 0..<2 {
            let after = simulation.blockedAfter(side: side)
            #expect(after.map { $0 >= 2 * Self.second && $0 <= 6 * Self.second + 250 * Self.millisecond } == true)
        }
    }

    @Test("one way dropped: the side whose probes are lost is blocked, sooner when the other way is seen clean")
    func oneWayDropped() throws {
        var simulation = PathSimulation(seed: 7, lossFromFirst: 1, lossFromSecond: 0)
        simulation.run()
        // The first side sees the second's probes arrive without a gap (the answers it sends are lost, so the
        // second keeps probing): it measures little loss, and its window is the floor of 12 probes, about 3 s.
        let first = try #require(simulation.blockedAfter(side: 0))
        #expect(first >= 2 * Self.second && first <= 3_500 * Self.millisecond)
        // The second sees nothing come back at all: the assumed loss sets its window, nearer the ceiling.
        let second = try #require(simulation.blockedAfter(side: 1))
        #expect(second > first && second <= 6_250 * Self.millisecond)
    }

    @Test("probes back off: at once, after 100 ms, then 1.5 times longer each time up to 250 ms")
    func backoff() {
        var machine = Machine()
        let start = 10 * Self.second
        #expect(machine.start(now: start) == .init(probe: 1, timer: .arm(at: start + 100 * Self.millisecond)))
        var now = start + 100 * Self.millisecond
        var waits: [UInt64] = []
        for _ in 0..<5 {
            let step = machine.timerFired(now: now)
            guard case .arm(let next) = step.timer else {
                Issue.record("no timer after \(step)")
                return
            }
            waits.append((next - now) / Self.millisecond)
            now = next
        }
        #expect(waits == [150, 225, 250, 250, 250])
        // A timer that fires early sends nothing and is armed again for the due time.
        let early = machine.timerFired(now: now - 10 * Self.millisecond)
        #expect(early == .init(probe: nil, timer: .arm(at: now), verdict: nil))
    }

    @Test("the window grows with the loss measured on the peer's probes, between the floor and the ceiling")
    func windowFollowsMeasuredLoss() {
        var clean = Machine()
        for sequence in UInt32(1)...40 { clean.peerProbeArrived(sequence: sequence) }
        var lossy = Machine()
        for sequence in stride(from: UInt32(1), through: 40, by: 2) { lossy.peerProbeArrived(sequence: sequence) }
        let unmeasured = Machine()
        #expect(clean.measuredLoss < 0.05)
        #expect(lossy.measuredLoss > 0.45 && lossy.measuredLoss < 0.55)
        #expect(clean.windowProbes == 12)
        #expect(unmeasured.windowProbes == 21)
        #expect(lossy.windowProbes > 40)
        #expect(Machine.windowProbes(loss: 0, policy: .default) == 12)
        #expect(Machine.windowProbes(loss: 1, policy: .default) == 10_000)
        // The window in probes holds against the loss it was made for: all of them lost has odds under 1e-6.
        for loss in [0.1, 0.2, 0.3, 0.5] {
            let probes = Machine.windowProbes(loss: loss, policy: .default)
            let failure = 1 - (1 - loss) * (1 - loss)
            #expect(pow(failure, Double(probes)) < 1e-6)
        }
    }

    @Test("an answer opens the path; a repeated or unknown one changes nothing; a late one reopens a blocked path")
    func answers() {
        var machine = Machine()
        let start = Self.second
        _ = machine.start(now: start)
        #expect(machine.answerArrived(sequence: 2, now: start) == .init())  // never sent
        #expect(machine.answerArrived(sequence: 0, now: start) == .init())
        #expect(machine.verdict == .probing)
        #expect(
            machine.answerArrived(sequence: 1, now: start + Self.millisecond) == .init(timer: .disarm, verdict: .open)
        )
        #expect(machine.answerArrived(sequence: 1, now: start + Self.millisecond) == .init())
        #expect(machine.timerFired(now: start + Self.second) == .init())

        var blocked = Machine()
        var now = start
        var step = blocked.start(now: now)
        while case .arm(let next) = step.timer {
            now = next
            step = blocked.timerFired(now: now)
        }
        #expect(blocked.verdict == .blocked)
        let summary = blocked.summary(now: now)
        #expect(summary.answers == 0 && summary.probesSent >= 12 && summary.elapsed >= 2 * Self.second)
        #expect(blocked.answerArrived(sequence: 3, now: now) == .init(timer: .disarm, verdict: .open))
    }

    @Test("probe bodies: probe and answer round-trip; anything else is not one")
    func probeBodies() {
        for probe in [DatagramProbe.probe(sequence: 1), .answer(sequence: 0x0102_0304), .probe(sequence: .max)] {
            #expect(DatagramProbe(probe.bytes) == probe)
            #expect(probe.bytes.count == DatagramProbe.length)
        }
        #expect(DatagramProbe.answer(sequence: 258).bytes == [2, 0, 0, 1, 2])
        #expect(DatagramProbe([1, 0, 0, 0, 0]) == nil)  // sequence 0
        #expect(DatagramProbe([3, 0, 0, 0, 1]) == nil)
        #expect(DatagramProbe([1, 0, 0, 1]) == nil)
        #expect(DatagramProbe([1, 0, 0, 0, 1, 0]) == nil)
        #expect(DatagramProbe.token(for: 0x0F0F) == ~UInt64(0x0F0F))
    }
}
