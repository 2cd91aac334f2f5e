/// The most memory each end's process held, to tell what a figure cost beside its CPU time: the peak of its
/// resident set since it started (`VmHWM` on Linux), read at the end of the test.
public struct MemoryUsage: Codable, Hashable, Sendable {
    /// The runner's process, in bytes.
    public var runnerPeakResidentBytes: Int
    /// The reflector's whole process, in bytes, as its report at the end said: since it started, so with
    /// what it held for other runners and earlier runs too; nil when it did not say.
    public var reflectorPeakResidentBytes: Int?

    /// Makes a usage record.
    ///
    /// - Parameters:
    ///   - runnerPeakResidentBytes: the runner's peak.
    ///   - reflectorPeakResidentBytes: the reflector's.
    public init(runnerPeakResidentBytes: Int, reflectorPeakResidentBytes: Int?) {
        self.runnerPeakResidentBytes = runnerPeakResidentBytes
        self.reflectorPeakResidentBytes = reflectorPeakResidentBytes
    }
}
