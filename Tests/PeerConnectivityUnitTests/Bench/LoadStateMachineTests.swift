import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

@testable import PeerConnectivityBench

@Suite("Accounting of one phase")
struct LoadStateMachineTests {
    static let second: UInt64 = 1_000_000_000

    func machine(
        size: Int = 64,
        count: Int = 10,
        window: Int = 1,
        delayMilliseconds: Double = 0,
        durationSeconds: Double = 60,
        samples: Bool = false,
        firstSequence: UInt64 = 100
    ) -> LoadStateMachine {
        let plan = TestPlan(
            sizes: [size],
            count: count,
            window: window,
            delayMilliseconds: delayMilliseconds,
            timeoutSeconds: 1,
            durationSeconds: durationSeconds,
            recordsSamples: samples
        )
        return LoadStateMachine(
            size: size,
            count: count,
            plan: plan,
            firstSequence: firstSequence,
            clockOrigin: 0,
            now: 0
        )
    }

    func echo(_ sequence: UInt64, intact: Bool = true) -> PayloadInspection {
        PayloadInspection(sequenceTag: sequence, tagBytes: 8, isIntact: intact)
    }

    @Test("one at a time: send, wait, echo, until finished")
    func pingPong() {
        var phase = machine(count: 3, samples: true)
        for (index, sequence) in (100...102).enumerated() {
            let now = UInt64(index) * 1_000
            #expect(phase.nextSend(now: now) == .send(sequence: UInt64(sequence)))
            #expect(phase.nextSend(now: now + 1) == .awaitEcho(until: now + Self.second))
            #expect(phase.received(echo(UInt64(sequence)), now: now + 500) == .echoed)
        }
        #expect(phase.nextSend(now: 10_000) == .finished)
        let result = phase.result
        #expect((result.sent, result.echoed, result.lost, result.corrupted) == (3, 3, 0, 0))
        #expect(result.roundTrip.count == 3)
        #expect(result.roundTrip.minNanoseconds == 500 && result.roundTrip.maxNanoseconds == 500)
        #expect(result.durationNanoseconds == 2_500)
        #expect(result.samples?.map(\.sequence) == [100, 101, 102])
        #expect(result.samples?.first?.receivedNanoseconds == 500)
    }

    @Test("no echo within the timeout: lost; an echo after that: late, not echoed")
    func lostThenLate() {
        var phase = machine(count: 1)
        #expect(phase.nextSend(now: 0) == .send(sequence: 100))
        #expect(phase.nextSend(now: Self.second) == .finished)
        #expect(phase.received(echo(100), now: Self.second + 1) == .late)
        #expect(phase.received(echo(100), now: Self.second + 2) == .duplicated)
        let result = phase.result
        #expect((result.sent, result.echoed, result.lost, result.late, result.duplicated) == (1, 0, 1, 1, 1))
        #expect(result.durationNanoseconds == Self.second)
    }

    @Test("a second echo of the same message: duplicated")
    func duplicate() {
        var phase = machine(count: 2, window: 2)
        _ = phase.nextSend(now: 0)
        _ = phase.nextSend(now: 0)
        #expect(phase.received(echo(100), now: 10) == .echoed)
        #expect(phase.received(echo(100), now: 11) == .duplicated)
        #expect(phase.received(echo(101), now: 12) == .echoed)
        #expect(phase.result.duplicated == 1)
        #expect(phase.result.echoed == 2)
    }

    @Test("an echo after a later message's echo: reordered, still echoed")
    func reordered() {
        var phase = machine(count: 3, window: 3)
        for _ in 0..<3 { _ = phase.nextSend(now: 0) }
        #expect(phase.nextSend(now: 0) == .awaitEcho(until: Self.second))
        #expect(phase.received(echo(101), now: 10) == .echoed)
        #expect(phase.received(echo(100), now: 11) == .echoed)
        #expect(phase.received(echo(102), now: 12) == .echoed)
        let result = phase.result
        #expect((result.echoed, result.reordered) == (3, 1))
    }

    @Test("wrong bytes: corrupted, and the message is accounted for")
    func corrupted() {
        var phase = machine(count: 1)
        _ = phase.nextSend(now: 0)
        #expect(phase.received(echo(100, intact: false), now: 5) == .corrupted)
        #expect(phase.nextSend(now: 6) == .finished)
        #expect((phase.result.corrupted, phase.result.echoed, phase.result.roundTrip.count) == (1, 0, 0))
    }

    @Test("echoes naming no message of the phase: stray")
    func stray() {
        var phase = machine(count: 1)
        _ = phase.nextSend(now: 0)
        #expect(phase.received(echo(99), now: 1) == .stray)
        #expect(phase.received(echo(101), now: 1) == .stray)
        #expect(phase.received(PayloadInspection(sequenceTag: 0, tagBytes: 0, isIntact: false), now: 1) == .stray)
        #expect(phase.result.stray == 3)
    }

    @Test("the window bounds messages in flight")
    func window() {
        var phase = machine(count: 10, window: 4)
        for sequence in UInt64(100)..<104 {
            #expect(phase.nextSend(now: 0) == .send(sequence: sequence))
        }
        #expect(phase.nextSend(now: 0) == .awaitEcho(until: Self.second))
        #expect(phase.inFlight == 4)
        phase.received(echo(101), now: 1)
        #expect(phase.nextSend(now: 1) == .awaitEcho(until: Self.second))  // 100 still holds the window
        phase.received(echo(100), now: 2)
        #expect(phase.nextSend(now: 2) == .send(sequence: 104))
        #expect(phase.nextSend(now: 2) == .send(sequence: 105))
        #expect(phase.nextSend(now: 2) == .awaitEcho(until: Self.second))
    }

    @Test("--delay-ms spaces the starts of sends")
    func delay() {
        var phase = machine(count: 3, window: 3, delayMilliseconds: 2)
        #expect(phase.nextSend(now: 0) == .send(sequence: 100))
        #expect(phase.nextSend(now: 1_000_000) == .sleep(until: 2_000_000))
        #expect(phase.nextSend(now: 2_000_000) == .send(sequence: 101))
    }

    @Test("--duration stops sending; what is in flight still gets its timeout")
    func durationCap() {
        var phase = machine(count: 1_000, window: 2, durationSeconds: 0.5)
        _ = phase.nextSend(now: 0)
        phase.received(echo(100), now: 10)
        #expect(phase.nextSend(now: Self.second / 2 - 1) == .send(sequence: 101))
        #expect(phase.nextSend(now: Self.second / 2) == .awaitEcho(until: Self.second / 2 - 1 + Self.second))
        phase.received(echo(101), now: Self.second / 2 + 5)
        #expect(phase.nextSend(now: Self.second / 2 + 6) == .finished)
        #expect((phase.result.planned, phase.result.sent, phase.result.echoed) == (1_000, 2, 2))
    }

    @Test("1-byte messages: the low byte names the message among those in flight")
    func tinyMessages() {
        var phase = machine(size: 1, count: 1_000, window: 256, firstSequence: 1)
        for _ in 0..<256 { _ = phase.nextSend(now: 0) }
        for sequence in UInt64(1)...256 {
            let tag = PayloadInspection(sequenceTag: sequence & 0xFF, tagBytes: 1, isIntact: true)
            #expect(phase.received(tag, now: 1) == .echoed)
        }
        for _ in 0..<256 { _ = phase.nextSend(now: 2) }  // 257...512: low bytes repeat
        let late = PayloadInspection(sequenceTag: 300 & 0xFF, tagBytes: 1, isIntact: true)
        #expect(phase.received(late, now: 3) == .echoed)
        #expect(phase.received(late, now: 3) == .duplicated)
        #expect(phase.result.echoed == 257)
    }

    @Test("whatever the network does, every message sent has exactly one outcome")
    func accountingInvariant() {
        var random = SplitMix64(seed: 7)
        var phase = machine(count: 5_000, window: 16, durationSeconds: 86_400, samples: true)
        var inFlight: [UInt64] = []
        var now: UInt64 = 0
        var sentCount = 0
        while true {
            now += 1_000
            let action = phase.nextSend(now: now)
            if case .finished = action { break }
            if case .send(let sequence) = action {
                sentCount += 1
                if Int.random(in: 0..<100, using: &random) >= 3 { inFlight.append(sequence) }  // 3% lost
                continue
            }
            guard !inFlight.isEmpty else {
                now += Self.second  // everything left is lost: let the timeouts pass
                continue
            }
            let index = Int.random(in: 0..<min(inFlight.count, 3), using: &random)  // some reordering
            let sequence = inFlight.remove(at: index)
            let intact = Int.random(in: 0..<100, using: &random) >= 2  // 2% corrupted
            phase.received(echo(sequence, intact: intact), now: now)
            if Int.random(in: 0..<100, using: &random) < 2 { phase.received(echo(sequence), now: now) }  // duplicates
        }
        let result = phase.result
        #expect(result.sent == 5_000 && sentCount == 5_000)
        #expect(result.echoed + result.lost + result.corrupted == result.sent)
        #expect(result.lost > 0 && result.corrupted > 0 && result.duplicated > 0 && result.reordered > 0)
        #expect(result.samples?.count == result.sent)
        #expect(result.roundTrip.count == result.echoed)
    }

    @Test("without --samples nothing per message is kept")
    func noSamples() {
        var phase = machine(count: 100_000)
        var now: UInt64 = 0
        while case .send(let sequence) = phase.nextSend(now: now) {
            now += 10
            phase.received(echo(sequence), now: now)
        }
        #expect(phase.result.samples == nil)
        #expect(phase.result.echoed == 100_000)
    }
}
