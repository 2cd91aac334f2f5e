import Foundation

/// Whether datagrams to a peer get through and back: one UDP path, judged from probes.
///
/// When a connection's datagram endpoints are known, each side sends probes (``DatagramProbe``) to the
/// peer's UDP endpoint, and the peer answers each one by UDP. The first answer opens the path. The
/// probes go on, the first at once and then after 100 ms, each wait 1.5 times the one before up to
/// 250 ms, until an answer comes or the path is judged **blocked**: no answer to any probe over a window
/// long enough for the loss measured, so that a lossy path is not taken for a blocked one.
///
/// - **The loss measured** is that of what did come back: the peer's own probes, which carry consecutive
///   sequence numbers, so a gap is a datagram lost on the way here. Four assumed datagrams at 30 % loss
///   are mixed in (``Policy/assumedLoss``, ``Policy/assumedWeight``), so that a few probes seen, or none,
///   do not read as a perfect link.
/// - **The window** in probes: the fewest unanswered probes after which a path that loses that share of
///   datagrams each way has less than one chance in a million (``Policy/falseBlockedOdds``) to have lost
///   every probe or its answer; at least 12 (``Policy/fewestProbes``, the floor in probes: at 30 % loss
///   on one way, unseen here, 12 probes all lost have odds of 5 in 10 million). A probe counts as
///   unanswered 300 ms after it was sent (``Policy/answerAllowance``).
/// - **Floor and ceiling** in time: never blocked sooner than 2 s after the first probe
///   (``Policy/shortestWindow``); blocked 6 s after it whatever the loss measured, when no probe has been
///   answered (``Policy/longestWindow``), so that a blocked path is reported within seconds.
///
/// An answer after the verdict opens the path again. No I/O and no clock: the shell sends the probes,
/// answers the peer's, arms the one timer and passes the time (monotonic nanoseconds) with each event.
package struct DatagramPathStateMachine: Sendable {
    /// Where the path stands.
    package enum Verdict: Sendable, Hashable {
        /// Probes are out; no answer yet.
        case probing
        /// A probe was answered: datagrams get through both ways.
        case open
        /// No probe was answered over the window.
        case blocked
    }

    /// The timings and odds the verdict is made with.
    package struct Policy: Sendable, Equatable {
        /// The wait between the first probe and the second.
        package var firstRetry: Duration = .milliseconds(100)
        /// Each wait is this many times the one before...
        package var backoff = 1.5
        /// ...up to this.
        package var longestRetry: Duration = .milliseconds(250)
        /// How long after it was sent a probe counts as unanswered.
        package var answerAllowance: Duration = .milliseconds(300)
        /// The floor: never blocked sooner than this after the first probe.
        package var shortestWindow: Duration = .seconds(2)
        /// The ceiling: blocked this long after the first probe when none was answered, whatever the loss.
        package var longestWindow: Duration = .seconds(6)
        /// The floor in probes: at least this many unanswered before the path is blocked.
        package var fewestProbes = 12
        /// The loss each way assumed where none is measured.
        package var assumedLoss = 0.3
        /// How many datagrams the assumed loss weighs as, beside those measured.
        package var assumedWeight = 4.0
        /// The odds of taking a working path for a blocked one that the window is made for.
        package var falseBlockedOdds = 1e-6

        /// The policy described on ``DatagramPathStateMachine``.
        package static let `default` = Policy()
    }

    /// What to do with the path's one timer.
    package enum Timer: Sendable, Hashable {
        /// Arm it for this time (monotonic nanoseconds), replacing the one armed.
        case arm(at: UInt64)
        /// Disarm it: none is needed.
        case disarm
    }

    /// What the shell does after an event.
    package struct Step: Sendable, Hashable {
        /// Send the probe with this sequence number now.
        package var probe: UInt32?
        /// The timer's change; nil: leave it as it is.
        package var timer: Timer?
        /// The verdict changed to this.
        package var verdict: Verdict?

        /// Makes a step; nothing to do by default.
        ///
        /// - Parameters:
        ///   - probe: the probe to send now.
        ///   - timer: the timer's change.
        ///   - verdict: the verdict it changed to.
        package init(probe: UInt32? = nil, timer: Timer? = nil, verdict: Verdict? = nil) {
            self.probe = probe
            self.timer = timer
            self.verdict = verdict
        }
    }

    /// Where the path stands, in figures, for logs and reports.
    package struct Summary: Sendable, Hashable {
        /// The verdict.
        package var verdict: Verdict
        /// Probes sent.
        package var probesSent: Int
        /// Answers received.
        package var answers: Int
        /// The loss each way the window is made for (see ``DatagramPathStateMachine``).
        package var measuredLoss: Double
        /// Unanswered probes the window asks for.
        package var windowProbes: Int
        /// Nanoseconds since the first probe.
        package var elapsed: UInt64

        /// Makes a summary.
        ///
        /// - Parameters:
        ///   - verdict: the verdict.
        ///   - probesSent: probes sent.
        ///   - answers: answers received.
        ///   - measuredLoss: the loss each way the window is made for.
        ///   - windowProbes: unanswered probes the window asks for.
        ///   - elapsed: nanoseconds since the first probe.
        package init(
            verdict: Verdict,
            probesSent: Int,
            answers: Int,
            measuredLoss: Double,
            windowProbes: Int,
            elapsed: UInt64
        ) {
            self.verdict = verdict
            self.probesSent = probesSent
            self.answers = answers
            self.measuredLoss = measuredLoss
            self.windowProbes = windowProbes
            self.elapsed = elapsed
        }
    }

    /// The most peer probes remembered to count gaps; later ones are not counted.
    private static let rememberedPeerProbes = 256

    /// The policy.
    package let policy: Policy
    private(set) package var verdict = Verdict.probing
    private var started: UInt64?
    /// When each probe was sent, in order.
    private var probeTimes: [UInt64] = []
    private var answered: Set<UInt32> = []
    private var peerProbes: Set<UInt32> = []
    private var highestPeerProbe: UInt32 = 0

    /// A path not probed yet.
    ///
    /// - Parameter policy: the timings and odds.
    package init(policy: Policy = .default) {
        self.policy = policy
    }

    /// The endpoints are known: the first probe goes now.
    ///
    /// - Parameter now: monotonic nanoseconds.
    /// - Returns: the first probe and the timer for the next; nothing when started already.
    package mutating func start(now: UInt64) -> Step {
        guard started == nil else { return Step() }
        started = now
        return sendProbe(now: now)
    }

    /// The timer fired: the next probe, or the verdict.
    ///
    /// - Parameter now: monotonic nanoseconds.
    /// - Returns: a probe and the next timer, or `.blocked`; nothing once the path is open or blocked.
    package mutating func timerFired(now: UInt64) -> Step {
        guard verdict == .probing, started != nil else { return Step() }
        if isBlocked(now: now) {
            verdict = .blocked
            return Step(timer: .disarm, verdict: .blocked)
        }
        let due = nextProbeDue
        guard now >= due else { return Step(timer: .arm(at: due)) }
        return sendProbe(now: now)
    }

    /// The peer answered a probe.
    ///
    /// - Parameters:
    ///   - sequence: the probe's sequence number, as the answer carries it.
    ///   - now: monotonic nanoseconds.
    /// - Returns: `.open` (and the timer disarmed) the first time; nothing for a repeated answer or one
    ///   that names no probe sent.
    package mutating func answerArrived(sequence: UInt32, now: UInt64) -> Step {
        guard sequence >= 1, Int(sequence) <= probeTimes.count, answered.insert(sequence).inserted else {
            return Step()
        }
        guard verdict != .open else { return Step() }
        verdict = .open
        return Step(timer: .disarm, verdict: .open)
    }

    /// A probe of the peer's arrived (the shell answers it): counted for the loss measured.
    ///
    /// - Parameter sequence: its sequence number.
    package mutating func peerProbeArrived(sequence: UInt32) {
        guard sequence >= 1, peerProbes.count < Self.rememberedPeerProbes else { return }
        peerProbes.insert(sequence)
        highestPeerProbe = max(highestPeerProbe, sequence)
    }

    /// The loss each way the window is made for: the share of the peer's probes missing, with the
    /// assumed ones mixed in.
    package var measuredLoss: Double {
        let missing = Double(Int(highestPeerProbe) - peerProbes.count)
        return (missing + policy.assumedWeight * policy.assumedLoss)
            / (Double(highestPeerProbe) + policy.assumedWeight)
    }

    /// Unanswered probes after which the path is blocked, for the loss measured.
    package var windowProbes: Int {
        Self.windowProbes(loss: measuredLoss, policy: policy)
    }

    /// The fewest probes all of which (or their answers) a path losing `loss` of its datagrams each way
    /// loses with odds below ``Policy/falseBlockedOdds``; at least ``Policy/fewestProbes``.
    ///
    /// - Parameters:
    ///   - loss: the share lost each way, 0...1.
    ///   - policy: the odds and the floor.
    /// - Returns: the count; 10,000 for a loss of 1 (the time ceiling decides then).
    package static func windowProbes(loss: Double, policy: Policy) -> Int {
        let delivered = 1 - min(max(loss, 0), 1)
        let failure = 1 - delivered * delivered
        guard failure > 0 else { return policy.fewestProbes }
        guard failure < 1 else { return 10_000 }
        let probes = (log(policy.falseBlockedOdds) / log(failure)).rounded(.up)
        return max(policy.fewestProbes, Int(min(probes, 10_000)))
    }

    /// The path in figures at `now`.
    ///
    /// - Parameter now: monotonic nanoseconds.
    package func summary(now: UInt64) -> Summary {
        Summary(
            verdict: verdict,
            probesSent: probeTimes.count,
            answers: answered.count,
            measuredLoss: measuredLoss,
            windowProbes: windowProbes,
            elapsed: started.map { now >= $0 ? now - $0 : 0 } ?? 0
        )
    }

    private mutating func sendProbe(now: UInt64) -> Step {
        probeTimes.append(now)
        return Step(probe: UInt32(probeTimes.count), timer: .arm(at: nextProbeDue))
    }

    /// When the next probe goes: the last one's time plus the wait after it.
    private var nextProbeDue: UInt64 {
        let sent = probeTimes.count
        let first = Double(Self.nanoseconds(policy.firstRetry))
        let wait = min(
            first * pow(policy.backoff, Double(max(sent - 1, 0))),
            Double(Self.nanoseconds(policy.longestRetry))
        )
        return (probeTimes.last ?? 0) + UInt64(wait)
    }

    private func isBlocked(now: UInt64) -> Bool {
        guard answered.isEmpty, let started, now >= started else { return false }
        let allowance = Self.nanoseconds(policy.answerAllowance)
        let unanswered = probeTimes.prefix { $0 + allowance <= now }.count
        return Self.judgesBlocked(unanswered: unanswered, elapsed: now - started, loss: measuredLoss, policy: policy)
    }

    /// The verdict's rule, for a path none of whose datagrams has come back: blocked once at least one is
    /// unanswered, the floor in time has passed, and either the window in probes for `loss` is unanswered
    /// or the ceiling in time has passed.
    ///
    /// - Parameters:
    ///   - unanswered: datagrams sent that asked for an answer and whose answer is overdue.
    ///   - elapsed: nanoseconds since the first was sent.
    ///   - loss: the loss each way measured (or assumed).
    ///   - policy: the floor, the ceiling and the odds.
    /// - Returns: whether the path is blocked.
    package static func judgesBlocked(unanswered: Int, elapsed: UInt64, loss: Double, policy: Policy) -> Bool {
        guard unanswered >= 1, elapsed >= nanoseconds(policy.shortestWindow) else { return false }
        return unanswered >= windowProbes(loss: loss, policy: policy) || elapsed >= nanoseconds(policy.longestWindow)
    }

    /// A duration in nanoseconds (0 for a negative one).
    ///
    /// - Parameter duration: the duration.
    package static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }
}
