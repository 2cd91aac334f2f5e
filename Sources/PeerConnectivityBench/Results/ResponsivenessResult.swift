/// The responsiveness test's figures: its phases in order, how it probed, and what each phase's load was.
public struct ResponsivenessResult: Codable, Hashable, Sendable {
    /// Load flows each loaded direction ran (`-P`): each a session of its own to the reflector, so a TCP
    /// connection of its own, carrying one stream each loaded way.
    public var loadFlows: Int
    /// Each phase's load time, in seconds (`-t`).
    public var phaseSeconds: Double
    /// The first seconds of each loaded phase whose probes are left out of its figures, while the load ramps
    /// up (`--omit`); nil for none.
    public var omitSeconds: Double?
    /// The time between two probes of each kind, in milliseconds.
    public var probeIntervalMilliseconds: Double
    /// How every phase's RPM is computed.
    public var rpmStatistic: String
    /// The `TCP_NOTSENT_LOWAT` the runner's loaded connection was given, in bytes; nil when it was not set
    /// (then the kernel's default holds, and the upload's self probes wait behind a full send buffer).
    public var runnerNotSentLowWatermark: Int?
    /// The same at the reflector, for the download's load, as its hello said; nil when it was not set.
    public var reflectorNotSentLowWatermark: Int?
    /// The phases that ran, in order: idle, download, upload, both.
    public var phases: [ResponsivenessPhase]

    /// Makes the figures.
    ///
    /// - Parameters:
    ///   - loadFlows: flows per loaded direction.
    ///   - phaseSeconds: each phase's load time.
    ///   - probeIntervalMilliseconds: the time between probes.
    ///   - runnerNotSentLowWatermark: the loaded connection's `TCP_NOTSENT_LOWAT`, if set.
    ///   - phases: the phases.
    public init(
        loadFlows: Int,
        phaseSeconds: Double,
        probeIntervalMilliseconds: Double,
        runnerNotSentLowWatermark: Int?,
        phases: [ResponsivenessPhase]
    ) {
        self.loadFlows = loadFlows
        self.phaseSeconds = phaseSeconds
        self.probeIntervalMilliseconds = probeIntervalMilliseconds
        rpmStatistic = ResponsivenessScore.statistic
        self.runnerNotSentLowWatermark = runnerNotSentLowWatermark
        self.phases = phases
    }

    /// The idle phase's foreign round trip p50, in nanoseconds: the link at rest, beside the loaded ones.
    public var idleRoundTripNanoseconds: UInt64? {
        phases.first { $0.name == .idle }.flatMap {
            $0.foreign.answered > 0 ? $0.foreign.roundTrip.p50Nanoseconds : nil
        }
    }
}
