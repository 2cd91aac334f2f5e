/// What a run tells its caller while it goes: the reflector reached, progress within a phase, and each
/// interval's report. Each is called from a task of the run's, never concurrently with itself.
public struct RunEvents: Sendable {
    /// The reflector was reached: how, and what it said of its host.
    public var connected: (@Sendable (ConnectionReport, HostInfo?) -> Void)?
    /// Where the phase under way stands, about four times a second (message tests).
    public var progress: (@Sendable (PhaseProgress) -> Void)?
    /// An interval ended (`--interval`).
    public var interval: (@Sendable (IntervalResult) -> Void)?

    /// Makes the set of callbacks; any may be nil.
    ///
    /// - Parameters:
    ///   - connected: the reflector was reached.
    ///   - progress: progress within a phase.
    ///   - interval: an interval ended.
    public init(
        connected: (@Sendable (ConnectionReport, HostInfo?) -> Void)? = nil,
        progress: (@Sendable (PhaseProgress) -> Void)? = nil,
        interval: (@Sendable (IntervalResult) -> Void)? = nil
    ) {
        self.connected = connected
        self.progress = progress
        self.interval = interval
    }
}
