import Foundation

/// One phase's ``LoadStateMachine`` shared by a sender, a receiver and a ticker, each on its own
/// thread or task. The sender waits either blocking (raw TCP threads) or suspended (session tasks);
/// both wake when an echo arrives, the phase fails, or the ticker sees their deadline pass.
final class LoadController: @unchecked Sendable {
    // @unchecked: every stored `var` below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var machine: LoadStateMachine
    /// Bumped by every arrival and failure, so a sender that decided to wait sees what changed since.
    private var generation: UInt64 = 0
    private var failure: (any Error)?
    /// Arrivals of unreliable messages that came on the connection instead of in a datagram.
    private var connectionArrivals = 0
    private var waiter: (continuation: CheckedContinuation<Void, Never>, deadline: UInt64)?
    private let startedAt: UInt64
    private let isWarmup: Bool
    private let size: Int
    private let planned: Int
    /// Unreliable mode against a reflector that does not probe: the echoes judge the UDP path
    /// (``UnreliablePath/judgeByEchoes(lost:datagramEchoes:elapsed:)``).
    private let judgesPathByEchoes: Bool
    /// The time the sender's schedule and the ticker read: ``MonotonicClock`` unless a test gives one it moves.
    private let clock: @Sendable () -> UInt64
    /// Whether an echo read where the session reads it may be answered there with the next message
    /// (``received(_:at:onConnection:mayReply:)``): a window of one, sent reliably.
    private let repliesInRead: Bool

    init(
        machine: LoadStateMachine,
        size: Int,
        planned: Int,
        isWarmup: Bool,
        judgesPathByEchoes: Bool = false,
        repliesInRead: Bool = false,
        now: UInt64,
        clock: @escaping @Sendable () -> UInt64 = MonotonicClock.now
    ) {
        self.machine = machine
        self.clock = clock
        self.repliesInRead = repliesInRead
        self.size = size
        self.planned = planned
        self.isWarmup = isWarmup
        self.judgesPathByEchoes = judgesPathByEchoes
        startedAt = now
    }

    /// Whether a phase of `plan` lets the session's reader send the next message as it reads an echo: one
    /// message in flight, sent reliably (a reply goes in the mode its message came in).
    static func repliesInRead(for plan: TestPlan) -> Bool {
        plan.window == 1 && plan.mode == .reliable
    }

    /// The sender's next step, and the generation it was decided in.
    ///
    /// - Throws: the phase's failure (the peer went away, a write failed).
    func nextSend() throws -> (action: LoadStateMachine.SendAction, generation: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        return (machine.nextSend(now: clock()), generation)
    }

    /// Accounts for an arrival and wakes the sender, or, when the arrival may be answered (`mayReply`: it was
    /// read where the session reads, which can send a reply), decides there whether the next message goes
    /// back as its reply, so that no task is woken between an echo and the next send.
    ///
    /// The reader sends only in a phase made with `repliesInRead` and while the sender is parked waiting for
    /// this echo (the sender then stays parked; every send is still decided under the lock, one at a time):
    /// with a window of one a single message is in flight, so the reader's sends and the sender's can never
    /// overtake each other. Anything else the machine says (pacing, the phase finished) wakes the sender to
    /// do it.
    ///
    /// - Parameters:
    ///   - inspection: what the payload said.
    ///   - now: when it was read.
    ///   - onConnection: an unreliable message that came on the connection (before the UDP endpoints
    ///     were known): counted in ``SizeResult/arrivedOnConnection``.
    ///   - mayReply: the caller can send the next message back at once.
    /// - Returns: the sequence number of the message to send back now, already counted as sent; nil when the
    ///   sender does what comes next.
    @discardableResult
    func received(
        _ inspection: PayloadInspection,
        at now: UInt64,
        onConnection: Bool = false,
        mayReply: Bool = false
    ) -> UInt64? {
        condition.lock()
        machine.received(inspection, now: now)
        if onConnection { connectionArrivals += 1 }
        generation += 1
        var reply: UInt64?
        // A parked sender means no failure yet: every failure takes the waiter.
        if mayReply, repliesInRead, waiter != nil, case .send(let sequence) = machine.nextSend(now: clock()) {
            reply = sequence
        }
        let resumed = reply == nil ? takeWaiter() : nil
        condition.broadcast()
        condition.unlock()
        resumed?.resume()
        return reply
    }

    /// Whether the sender is parked in ``wait(until:after:)`` (tests).
    var senderIsParked: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiter != nil
    }

    /// Ends the phase with an error; the sender throws it at its next step.
    func fail(_ error: any Error) {
        condition.lock()
        if failure == nil { failure = error }
        generation += 1
        let resumed = takeWaiter()
        condition.broadcast()
        condition.unlock()
        resumed?.resume()
    }

    /// Blocks the calling thread until something changed since `generation` or `deadline` passes.
    func waitBlocking(until deadline: UInt64, after generation: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        while self.generation == generation {
            let now = MonotonicClock.now()
            guard now < deadline else { return }
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
        }
    }

    /// Suspends until something changed since `generation`, or the ticker sees `deadline` pass.
    func wait(until deadline: UInt64, after generation: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if self.generation != generation || failure != nil {
                condition.unlock()
                continuation.resume()
                return
            }
            waiter = (continuation, deadline)
            condition.unlock()
        }
    }

    /// Counts timed-out messages as lost and wakes a sender whose deadline has passed; called
    /// every few milliseconds.
    ///
    /// - Returns: where the phase stands.
    func tick() -> PhaseProgress {
        condition.lock()
        let now = clock()
        let expired = machine.expire(now: now)
        var resumed: CheckedContinuation<Void, Never>?
        if expired > 0 {
            generation += 1
            resumed = takeWaiter()
            condition.broadcast()
        } else if let waiter, now >= waiter.deadline {
            resumed = takeWaiter()
        }
        if judgesPathByEchoes, failure == nil,
            let blocked = UnreliablePath.judgeByEchoes(
                lost: machine.lost,
                datagramEchoes: machine.echoed - connectionArrivals,
                elapsed: now - startedAt
            )
        {
            failure = blocked
            generation += 1
            resumed = resumed ?? takeWaiter()
            condition.broadcast()
        }
        let progress = PhaseProgress(
            size: size,
            isWarmup: isWarmup,
            planned: planned,
            sent: machine.sent,
            echoed: machine.echoed,
            lost: machine.lost,
            elapsedNanoseconds: now - startedAt
        )
        condition.unlock()
        resumed?.resume()
        return progress
    }

    /// The phase's result and the sequence number the next phase starts at.
    var outcome: (result: SizeResult, nextSequence: UInt64) {
        condition.lock()
        defer { condition.unlock() }
        return (machine.result, machine.nextSequence)
    }

    /// The counts of the interval since the last call, and its round trips; starts the next interval.
    func takeInterval() -> LoadStateMachine.IntervalCounts {
        condition.lock()
        defer { condition.unlock() }
        return machine.takeInterval()
    }

    /// Arrivals of unreliable messages that came on the connection.
    var arrivalsOnConnection: Int {
        condition.lock()
        defer { condition.unlock() }
        return connectionArrivals
    }

    private func takeWaiter() -> CheckedContinuation<Void, Never>? {
        defer { waiter = nil }
        return waiter?.continuation
    }
}
