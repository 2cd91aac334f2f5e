import Synchronization

/// The interval reports of a run (`--interval`): each is kept for the document's `intervals` and handed
/// to the caller as it ends. Times are seconds from the log's start, the start of the test.
final class IntervalLog: Sendable {
    private struct State {
        var recorded: [IntervalResult] = []
        var lastEnd: Double = 0
        var lastSent = 0
        var lastReceived = 0
        var lastStreams: (sent: [Int], received: [Int]) = ([], [])
    }

    private let interval: Double?
    private let omitSeconds: Double
    private let report: (@Sendable (IntervalResult) -> Void)?
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    /// - Parameters:
    ///   - interval: seconds per interval; nil keeps no intervals.
    ///   - omitSeconds: bulk with `--omit`: the intervals that begin before it are marked omitted.
    ///   - report: called with each interval as it ends.
    init(every interval: Double?, omitting omitSeconds: Double? = nil, report: (@Sendable (IntervalResult) -> Void)?) {
        self.interval = interval
        self.omitSeconds = omitSeconds ?? 0
        self.report = report
    }

    /// The intervals so far; nil when none are kept.
    var recorded: [IntervalResult]? {
        interval == nil ? nil : state.withLock { $0.recorded }
    }

    private var now: Double {
        let elapsed = start.duration(to: .now)
        return elapsed.seconds
    }

    /// Bulk test: every interval, the bytes the counters moved in it; returns when cancelled, after the last
    /// (partial) interval.
    ///
    /// - Parameters:
    ///   - counters: the bytes written forward and read back so far.
    ///   - forward: whether the runner writes (its bytes are reported).
    ///   - reverse: whether the reflector writes (the bytes read are reported).
    ///   - probes: responsiveness: the probes, whose round trips in each interval are reported beside the bytes.
    ///   - link: reads the run's connection's kernel figures, kept with each interval as it ends.
    func follow(
        _ counters: BulkTest.Counters,
        forward: Bool,
        reverse: Bool,
        probes: ProbeBook? = nil,
        link: (@Sendable () async -> LinkSample?)? = nil
    ) async {
        guard let interval else { return }
        while (try? await Task.sleep(for: .milliseconds(Int(interval * 1_000)))) != nil {
            close(counters, forward: forward, reverse: reverse, probes: probes, link: await link?())
        }
        close(counters, forward: forward, reverse: reverse, probes: probes, link: await link?(), last: true)
    }

    private func close(
        _ counters: BulkTest.Counters,
        forward: Bool,
        reverse: Bool,
        probes: ProbeBook?,
        link: LinkSample?,
        last: Bool = false
    ) {
        let end = now
        let (sent, received, streams) = counters.snapshot
        let roundTrips = probes?.takeInterval() ?? [:]
        let phase = probes?.currentPhase
        let result = state.withLock { state -> IntervalResult? in
            // The tail after the last whole interval is kept only when it is a tenth of one or more.
            guard end > state.lastEnd + (last ? (interval ?? 0) / 10 : 0.001) else { return nil }
            var result = IntervalResult(startSeconds: state.lastEnd, endSeconds: end)
            result.phase = phase
            result.link = link
            if let foreign = roundTrips[.foreign], !foreign.isEmpty {
                let summary = LatencySummary(nanoseconds: foreign)
                result.roundTripP50Nanoseconds = summary.p50Nanoseconds
                result.roundTripP99Nanoseconds = summary.p99Nanoseconds
            }
            if let own = roundTrips[.selfFlow], !own.isEmpty {
                result.selfRoundTripP50Nanoseconds = LatencySummary(nanoseconds: own).p50Nanoseconds
            }
            if let datagrams = roundTrips[.datagram], !datagrams.isEmpty {
                result.datagramRoundTripP50Nanoseconds = LatencySummary(nanoseconds: datagrams).p50Nanoseconds
            }
            if state.lastEnd < omitSeconds { result.omitted = true }
            if forward { result.sentBytes = sent - state.lastSent }
            if reverse { result.receivedBytes = received - state.lastReceived }
            if streams.sent.count > 1 {
                func change(_ now: [Int], _ before: [Int]) -> [Int] {
                    now.indices.map { now[$0] - (before.indices.contains($0) ? before[$0] : 0) }
                }
                if forward { result.streamSentBytes = change(streams.sent, state.lastStreams.sent) }
                if reverse { result.streamReceivedBytes = change(streams.received, state.lastStreams.received) }
            }
            state.lastStreams = streams
            state.lastEnd = end
            state.lastSent = sent
            state.lastReceived = received
            state.recorded.append(result)
            return result
        }
        if let result { report?(result) }
    }

    /// Message tests: closes the interval under way when it is over (called every few milliseconds).
    func poll(_ controller: LoadController) {
        guard let interval else { return }
        let end = now
        guard end >= state.withLock({ $0.lastEnd }) + interval else { return }
        close(controller, at: end)
    }

    /// Message tests: closes the partial interval at the end of a measured phase.
    func flush(_ controller: LoadController) {
        guard interval != nil else { return }
        close(controller, at: now)
    }

    private func close(_ controller: LoadController, at end: Double) {
        let counts = controller.takeInterval()
        let result = state.withLock { state -> IntervalResult? in
            guard end > state.lastEnd + 0.001 else { return nil }
            var result = IntervalResult(startSeconds: state.lastEnd, endSeconds: end)
            result.messagesSent = counts.sent
            result.messagesEchoed = counts.echoed
            result.messagesLost = counts.lost
            if counts.roundTrip.count > 0 {
                result.roundTripP50Nanoseconds = counts.roundTrip.p50Nanoseconds
                result.roundTripP99Nanoseconds = counts.roundTrip.p99Nanoseconds
            }
            state.lastEnd = end
            state.recorded.append(result)
            return result
        }
        if let result { report?(result) }
    }
}
