/// The resource and folder tests' `--beside-echo`: small probes (``probeBytes``) sent at a set rate on
/// the transfers' own session and echoed by the reflector, first for a second on the idle session, then
/// while each measured transfer runs. Their round trips are what an app's messages see beside a file
/// transfer: the library sends messages ahead of channel data, so the difference is its fairness.
public struct BesideEchoResult: Codable, Hashable, Sendable {
    /// Probes a second.
    public var ratePerSecond: Double
    /// The size of each probe, in bytes.
    public var probeBytes: Int
    /// The probes sent on the idle session before the measured transfers.
    public var idle: ProbeResult
    /// The probes sent while the measured transfers ran (from `sendResource` to the transfer's end).
    public var duringTransfers: ProbeResult

    /// Makes a result.
    ///
    /// - Parameters:
    ///   - ratePerSecond: probes a second.
    ///   - probeBytes: bytes a probe.
    ///   - idle: the idle session's probes.
    ///   - duringTransfers: the probes beside the transfers.
    public init(ratePerSecond: Double, probeBytes: Int, idle: ProbeResult, duringTransfers: ProbeResult) {
        self.ratePerSecond = ratePerSecond
        self.probeBytes = probeBytes
        self.idle = idle
        self.duringTransfers = duringTransfers
    }
}
