/// Sends and accounts for the messages of one phase (one size's warm-up or measured messages), with
/// plain values: no clock, no I/O. The drivers give it the time and carry out what it says.
///
/// Memory does not grow with the count: a ring of `window` send times, a set of the sequence numbers
/// counted lost (capped), and, only when samples are asked for, one ``MessageSample`` per message.
public struct LoadStateMachine: Sendable {
    /// What the sender does next.
    public enum SendAction: Hashable, Sendable {
        /// Send message `sequence` now (its send time is already taken).
        case send(sequence: UInt64)
        /// Pacing: nothing but time can allow the next send; sleep until then (monotonic nanoseconds).
        case sleep(until: UInt64)
        /// The window is full, or every message is sent and some are in flight: wait for an echo,
        /// at most until the deadline, when the oldest message times out.
        case awaitEcho(until: UInt64)
        /// Every message is sent and accounted for.
        case finished
    }

    /// What one arrival was.
    public enum Arrival: Hashable, Sendable {
        /// The intact echo of a message in flight.
        case echoed
        /// The echo of a message in flight, with the wrong size or bytes.
        case corrupted
        /// The echo of a message already answered.
        case duplicated
        /// The echo of a message already counted lost.
        case late
        /// An arrival that names no message of this phase.
        case stray
    }

    /// What one interval of the phase counted (`--interval`).
    public struct IntervalCounts: Sendable {
        /// Messages sent in it.
        public var sent = 0
        /// Intact echoes in it.
        public var echoed = 0
        /// Messages counted lost in it.
        public var lost = 0
        /// The round trips of its echoes.
        public var roundTrip = LatencySummary()
    }

    /// The most sequence numbers remembered as lost, to tell late echoes from duplicates.
    public static let maximumRememberedLosses = 100_000

    private struct Slot {
        var sentAt: UInt64 = 0
        /// When the message was due: its send time in closed loop; in open loop, its place in the
        /// schedule, which it may have missed (its round trip counts from here, as wrk2's).
        var dueAt: UInt64 = 0
        var pending = false
    }

    private let size: Int
    private let count: Int
    private let window: UInt64
    private let delay: UInt64
    /// Open loop: nanoseconds between two messages' due times; nil in closed loop.
    private let spacing: Double?
    private var phaseStart: UInt64
    private let timeout: UInt64
    private let sendingEnds: UInt64
    private let firstSequence: UInt64
    private let clockOrigin: UInt64
    private let recordsSamples: Bool

    private var slots: [Slot]
    /// The oldest message not yet accounted for (== `next` when none is in flight).
    private var base: UInt64
    /// The next sequence number to send.
    private var next: UInt64
    private var stoppedSending = false
    private var firstSentAt: UInt64?
    private var lastSentAt: UInt64?
    private var lastAccountedAt: UInt64 = 0
    private var highestEchoed: UInt64?
    private var lostSequences = Set<UInt64>()
    private var latency = LatencyRecorder()
    /// RFC 3550's interarrival jitter over the echoes in arrival order, and the last echo's transit time.
    private var jitter = 0.0
    private var lastTransit: UInt64?
    /// The round trips since the interval began, and its counts when it began.
    private var intervalLatency = LatencyRecorder()
    private var intervalBase = (sent: 0, echoed: 0, lost: 0)
    private var samples: [MessageSample] = []
    private var counts: SizeResult

    /// Starts a phase.
    ///
    /// - Parameters:
    ///   - size: the message size.
    ///   - count: messages to send.
    ///   - plan: window, delay, timeout, duration and samples.
    ///   - firstSequence: the sequence number of the first message; phases never share numbers.
    ///   - clockOrigin: the run's start on the monotonic clock, for samples.
    ///   - now: the phase's start on the monotonic clock (the duration cap counts from here).
    public init(size: Int, count: Int, plan: TestPlan, firstSequence: UInt64, clockOrigin: UInt64, now: UInt64) {
        self.size = size
        self.count = count
        window = UInt64(plan.window)
        delay = UInt64(plan.delayMilliseconds * 1e6)
        spacing = plan.rate.map { 1e9 / $0 }
        phaseStart = now
        timeout = UInt64(plan.timeoutSeconds * 1e9)
        sendingEnds = now + UInt64(plan.durationSeconds * 1e9)
        self.firstSequence = firstSequence
        self.clockOrigin = clockOrigin
        recordsSamples = plan.recordsSamples
        slots = Array(repeating: Slot(), count: plan.window)
        base = firstSequence
        next = firstSequence
        counts = SizeResult(size: size, planned: count)
    }

    /// Messages sent so far.
    public var sent: Int { counts.sent }
    /// Intact echoes so far.
    public var echoed: Int { counts.echoed }
    /// Messages counted lost so far.
    public var lost: Int { counts.lost }
    /// Messages in flight.
    public var inFlight: Int { Int(next - base) }
    /// The sequence number the next phase starts at.
    public var nextSequence: UInt64 { next }

    /// Decides what the sender does next; counts messages whose timeout has passed as lost first.
    ///
    /// - Parameter now: the monotonic clock in nanoseconds.
    /// - Returns: the action; after `.send`, the message's send time is `now`.
    public mutating func nextSend(now: UInt64) -> SendAction {
        expire(now: now)
        if !stoppedSending, counts.sent == count || now >= sendingEnds {
            stoppedSending = true
        }
        if stoppedSending {
            return base == next ? .finished : .awaitEcho(until: deadline(of: base))
        }
        if next - base >= window {
            return .awaitEcho(until: deadline(of: base))
        }
        if delay > 0, let lastSentAt, now < lastSentAt + delay {
            return .sleep(until: min(lastSentAt + delay, sendingEnds))
        }
        var due = now
        if let spacing {
            due = phaseStart + UInt64(Double(counts.sent) * spacing)
            if now < due { return .sleep(until: min(due, sendingEnds)) }
        }
        slots[slot(next)] = Slot(sentAt: now, dueAt: due, pending: true)
        if firstSentAt == nil { firstSentAt = now }
        lastSentAt = now
        next += 1
        counts.sent += 1
        return .send(sequence: next - 1)
    }

    /// Counts every message in flight whose timeout has passed as lost.
    ///
    /// - Parameter now: the monotonic clock in nanoseconds.
    /// - Returns: how many were counted lost.
    @discardableResult
    public mutating func expire(now: UInt64) -> Int {
        var expired = 0
        while base < next, slots[slot(base)].pending, now >= deadline(of: base) {
            let sentAt = slots[slot(base)].sentAt
            slots[slot(base)].pending = false
            counts.lost += 1
            if lostSequences.count < Self.maximumRememberedLosses { lostSequences.insert(base) }
            lastAccountedAt = max(lastAccountedAt, sentAt + timeout)
            record(base, sentAt: sentAt, receivedAt: nil, outcome: .lost)
            expired += 1
            advanceBase()
        }
        return expired
    }

    /// Accounts for one arrival.
    ///
    /// - Parameters:
    ///   - inspection: what ``PayloadPattern/inspect(_:expectedSize:)`` read from it.
    ///   - now: when it was read, on the monotonic clock in nanoseconds.
    /// - Returns: what the arrival was.
    @discardableResult
    public mutating func received(_ inspection: PayloadInspection, now: UInt64) -> Arrival {
        guard let sequence = resolve(inspection) else {
            if inspection.tagBytes > 0, inspection.tagBytes < PayloadPattern.sequenceBytes {
                counts.duplicated += 1
                return .duplicated
            }
            counts.stray += 1
            return .stray
        }
        guard sequence >= base, slots[slot(sequence)].pending else {
            if lostSequences.remove(sequence) != nil {
                counts.late += 1
                return .late
            }
            counts.duplicated += 1
            return .duplicated
        }
        let sentAt = slots[slot(sequence)].sentAt
        let dueAt = slots[slot(sequence)].dueAt
        slots[slot(sequence)].pending = false
        lastAccountedAt = max(lastAccountedAt, now)
        let arrival: Arrival
        if inspection.isIntact {
            counts.echoed += 1
            let roundTrip = now >= dueAt ? now - dueAt : 0
            latency.record(roundTrip)
            intervalLatency.record(roundTrip)
            let transit = now >= sentAt ? now - sentAt : 0
            if let lastTransit {
                let difference = Double(transit) - Double(lastTransit)
                jitter += (abs(difference) - jitter) / 16
            }
            lastTransit = transit
            if let highestEchoed, sequence < highestEchoed {
                counts.reordered += 1
            } else {
                highestEchoed = sequence
            }
            record(sequence, sentAt: sentAt, receivedAt: now, outcome: .echoed)
            arrival = .echoed
        } else {
            counts.corrupted += 1
            record(sequence, sentAt: sentAt, receivedAt: now, outcome: .corrupted)
            arrival = .corrupted
        }
        advanceBase()
        return arrival
    }

    /// The counts since the last call (or the phase's start), and their round trips; starts the next
    /// interval.
    public mutating func takeInterval() -> IntervalCounts {
        var counts = IntervalCounts()
        counts.sent = self.counts.sent - intervalBase.sent
        counts.echoed = self.counts.echoed - intervalBase.echoed
        counts.lost = self.counts.lost - intervalBase.lost
        counts.roundTrip = intervalLatency.summary
        intervalBase = (self.counts.sent, self.counts.echoed, self.counts.lost)
        intervalLatency = LatencyRecorder()
        return counts
    }

    /// The phase's result: counts, round trips, throughput, and samples when asked for.
    public var result: SizeResult {
        var result = counts
        let duration = firstSentAt.map { lastAccountedAt > $0 ? lastAccountedAt - $0 : 0 } ?? 0
        result.durationNanoseconds = duration
        result.roundTrip = latency.summary
        if counts.echoed > 1 { result.jitterNanoseconds = jitter }
        if duration > 0 {
            let seconds = Double(duration) / 1e9
            result.throughput = ThroughputSummary(
                sentBytesPerSecond: Double(counts.sent * size) / seconds,
                receivedBytesPerSecond: Double(counts.echoed * size) / seconds,
                messagesPerSecond: Double(counts.echoed) / seconds
            )
        }
        if recordsSamples {
            result.samples = samples.sorted { $0.sequence < $1.sequence }
        }
        return result
    }

    /// The full sequence number of an arrival, if it names a message sent in this phase.
    private func resolve(_ inspection: PayloadInspection) -> UInt64? {
        switch inspection.tagBytes {
        case PayloadPattern.sequenceBytes:
            let sequence = inspection.sequenceTag
            return sequence >= firstSequence && sequence < next ? sequence : nil
        case 1..<PayloadPattern.sequenceBytes:
            // Only the low bytes travel: the one message in flight with those low bytes (the window is
            // never wider than the tag can tell apart).
            let mask: UInt64 = (1 << (8 * UInt64(inspection.tagBytes))) - 1
            let candidate = base + ((inspection.sequenceTag &- base) & mask)
            return candidate < next ? candidate : nil
        default:
            return nil
        }
    }

    private func slot(_ sequence: UInt64) -> Int {
        Int(sequence % window)
    }

    private func deadline(of sequence: UInt64) -> UInt64 {
        slots[slot(sequence)].sentAt + timeout
    }

    private mutating func advanceBase() {
        while base < next, !slots[slot(base)].pending {
            base += 1
        }
    }

    private mutating func record(_ sequence: UInt64, sentAt: UInt64, receivedAt: UInt64?, outcome: MessageOutcome) {
        guard recordsSamples else { return }
        samples.append(
            MessageSample(
                sequence: sequence,
                size: size,
                sentNanoseconds: sentAt &- clockOrigin,
                receivedNanoseconds: receivedAt.map { $0 &- clockOrigin },
                outcome: outcome
            )
        )
    }
}
