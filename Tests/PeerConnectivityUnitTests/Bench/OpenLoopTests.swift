import Foundation
import Synchronization
import Testing

@testable import PeerConnectivityBench

/// Open-loop load (`--rate`), jitter, intervals and a blocked UDP path, in memory and on the clock.
@Suite("Open loop, jitter and intervals")
struct OpenLoopTests {
    static let millisecond: UInt64 = 1_000_000

    func machine(count: Int, rate: Double? = nil, window: Int = 64) -> LoadStateMachine {
        let plan = TestPlan(sizes: [64], count: count, window: window, timeoutSeconds: 1, rate: rate)
        return LoadStateMachine(size: 64, count: count, plan: plan, firstSequence: 1, clockOrigin: 0, now: 0)
    }

    func echo(_ sequence: UInt64) -> PayloadInspection {
        PayloadInspection(sequenceTag: sequence, tagBytes: 8, isIntact: true)
    }

    @Test("open loop: sends follow the schedule, not the echoes; a message sent late counts from when it was due")
    func coordinatedOmission() {
        // 1,000 messages a second: one due every millisecond.
        var phase = machine(count: 4, rate: 1_000)
        #expect(phase.nextSend(now: 0) == .send(sequence: 1))
        #expect(phase.nextSend(now: 100) == .sleep(until: Self.millisecond), "the next is due at 1 ms")
        #expect(phase.nextSend(now: Self.millisecond) == .send(sequence: 2), "sent with the first unanswered")
        // The sender stalls: messages 3 and 4 go out 10 ms late, at 12 ms.
        #expect(phase.nextSend(now: 12 * Self.millisecond) == .send(sequence: 3))
        #expect(phase.nextSend(now: 12 * Self.millisecond) == .send(sequence: 4), "the backlog goes at once")
        for sequence: UInt64 in 1...4 { phase.received(echo(sequence), now: 13 * Self.millisecond) }
        let trip = phase.result.roundTrip
        // Due at 0, 1, 2 and 3 ms, answered at 13 ms: the stall is in every figure, as a user would feel it.
        #expect(trip.maxNanoseconds == 13 * Self.millisecond)
        #expect(trip.minNanoseconds == 10 * Self.millisecond, "message 4 was due at 3 ms, not sent at 12")
    }

    @Test("closed loop: a round trip counts from the send, as before")
    func closedLoop() {
        var phase = machine(count: 1, window: 1)
        #expect(phase.nextSend(now: 5 * Self.millisecond) == .send(sequence: 1))
        phase.received(echo(1), now: 7 * Self.millisecond)
        #expect(phase.result.roundTrip.p50Nanoseconds <= 2 * Self.millisecond + 2_000)
    }

    @Test("jitter is RFC 3550's: transit differences smoothed by 1/16; none for even round trips")
    func jitter() {
        var even = machine(count: 10)
        var uneven = machine(count: 10)
        for sequence: UInt64 in 1...10 {
            let sent = sequence * 10 * Self.millisecond
            _ = even.nextSend(now: sent)
            _ = uneven.nextSend(now: sent)
            even.received(echo(sequence), now: sent + Self.millisecond)
            // Round trips alternate 1 ms and 3 ms: each differs from the one before by 2 ms.
            uneven.received(echo(sequence), now: sent + (sequence % 2 == 0 ? 3 : 1) * Self.millisecond)
        }
        #expect(even.result.jitterNanoseconds == 0)
        var expected = 0.0
        for _ in 2...10 { expected += (2e6 - expected) / 16 }
        #expect(abs((uneven.result.jitterNanoseconds ?? 0) - expected) < 1)
    }

    @Test("each interval counts its own sends, echoes and losses, and its round trips")
    func intervals() {
        var phase = machine(count: 6)
        for sequence: UInt64 in 1...3 {
            _ = phase.nextSend(now: sequence)
            phase.received(echo(sequence), now: sequence + 2 * Self.millisecond)
        }
        let first = phase.takeInterval()
        #expect((first.sent, first.echoed, first.lost) == (3, 3, 0))
        #expect(first.roundTrip.p50Nanoseconds >= 2 * Self.millisecond)
        for sequence: UInt64 in 4...6 {
            _ = phase.nextSend(now: 10 * Self.millisecond + sequence)
        }
        phase.received(echo(4), now: 10 * Self.millisecond + 9 * Self.millisecond)
        phase.expire(now: 10 * Self.millisecond + 2 * 1_000_000_000)
        let second = phase.takeInterval()
        #expect((second.sent, second.echoed, second.lost) == (3, 1, 2))
        #expect(second.roundTrip.count == 1 && second.roundTrip.p50Nanoseconds >= 8 * Self.millisecond)
    }

    @Test("unreliable: no datagram back within a second fails the phase as blocked, saying what to open")
    func blockedUDP() throws {
        // On a clock the test moves: the second is the controller's, however long the machine takes meanwhile.
        let start: UInt64 = 1_000_000_000_000
        let time = Mutex(start)
        let plan = TestPlan(mode: .unreliable, sizes: [64], count: 100, window: 16, timeoutSeconds: 5)
        let machine = LoadStateMachine(
            size: 64,
            count: 100,
            plan: plan,
            firstSequence: 1,
            clockOrigin: start,
            now: start
        )
        let controller = LoadController(
            machine: machine,
            size: 64,
            planned: 100,
            isWarmup: true,
            unreliable: true,
            now: start,
            clock: { time.withLock { $0 } }
        )
        for _ in 0..<5 { _ = try controller.nextSend() }
        _ = controller.tick()
        #expect(throws: Never.self) { _ = try controller.nextSend() }
        // A nanosecond short of the second: not yet.
        time.withLock { $0 = start + LoadController.firstDatagramWithin - 1 }
        _ = controller.tick()
        #expect(throws: Never.self) { _ = try controller.nextSend() }
        time.withLock { $0 = start + LoadController.firstDatagramWithin }
        _ = controller.tick()
        let error = #expect(throws: BenchError.self) { _ = try controller.nextSend() }
        #expect(error?.message.contains("UDP between the hosts seems blocked") == true)
    }
}
