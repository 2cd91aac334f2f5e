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

    @Test(
        "unreliable, against a reflector that does not probe: blocked only when no datagram came back over the window"
    )
    func blockedUDPJudgedByEchoes() throws {
        // On a clock the test moves: the window is the controller's, however long the machine takes meanwhile.
        let start: UInt64 = 1_000_000_000_000
        let time = Mutex(start)
        let plan = TestPlan(mode: .unreliable, sizes: [64], count: 1000, window: 16, timeoutSeconds: 1)
        func controller() -> LoadController {
            let machine = LoadStateMachine(
                size: 64,
                count: 1000,
                plan: plan,
                firstSequence: 1,
                clockOrigin: start,
                now: start
            )
            return LoadController(
                machine: machine,
                size: 64,
                planned: 1000,
                isWarmup: true,
                judgesPathByEchoes: true,
                now: start,
                clock: { time.withLock { $0 } }
            )
        }
        func sendWindow(_ controller: LoadController) throws {
            while case .send = try controller.nextSend().action {}
        }
        let blocked = controller()
        try sendWindow(blocked)
        // A second: the 16 time out, but the floor is 2 s.
        time.withLock { $0 = start + 1_000_000_000 }
        _ = blocked.tick()
        try sendWindow(blocked)
        // Just short of 2 s, 16 lost: still not.
        time.withLock { $0 = start + 1_999_999_999 }
        #expect(blocked.tick().lost == 16)
        #expect(throws: Never.self) { _ = try blocked.nextSend() }
        // At 2 s, 32 lost: past the window for the loss assumed (21): blocked, saying what to open.
        time.withLock { $0 = start + 2_000_000_000 }
        _ = blocked.tick()
        let error = #expect(throws: BenchError.self) { _ = try blocked.nextSend() }
        #expect(error?.message.contains("UDP between the hosts seems blocked") == true)
        #expect(error?.message.contains("7449-7480") == true)

        // One datagram back among as many losses: the path is not blocked, whatever else is lost.
        time.withLock { $0 = start }
        let lossy = controller()
        try sendWindow(lossy)
        lossy.received(PayloadInspection(sequenceTag: 3, tagBytes: 8, isIntact: true), at: start + 1_000)
        for second in UInt64(1)...8 {
            time.withLock { $0 = start + second * 1_000_000_000 }
            _ = lossy.tick()
            try sendWindow(lossy)
        }
        #expect(lossy.tick().lost > 100)
        #expect(throws: Never.self) { _ = try lossy.nextSend() }

        // Echoes over the connection (before the endpoint was known) do not count as datagrams.
        time.withLock { $0 = start }
        let onConnection = controller()
        try sendWindow(onConnection)
        onConnection.received(
            PayloadInspection(sequenceTag: 3, tagBytes: 8, isIntact: true),
            at: start,
            onConnection: true
        )
        time.withLock { $0 = start + 1_000_000_000 }
        _ = onConnection.tick()
        try sendWindow(onConnection)
        time.withLock { $0 = start + 2_000_000_000 }
        #expect(onConnection.tick().lost == 31)
        #expect(throws: BenchError.self) { _ = try onConnection.nextSend() }
    }
}
