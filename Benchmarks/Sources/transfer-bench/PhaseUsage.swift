import PeerConnectivityBench

/// What one process spent during one phase of a benchmark: CPU time, and how far its resident set
/// rose above where it stood when the phase began.
public struct PhaseUsage: Codable, Sendable {
    /// CPU time in user space during the phase, in seconds.
    public var userCPUSeconds: Double
    /// CPU time in the kernel during the phase, in seconds.
    public var systemCPUSeconds: Double
    /// Resident set when the phase began, in bytes.
    public var residentBeforeBytes: Int
    /// The peak resident set during the phase, in bytes.
    public var peakResidentBytes: Int
    /// How far the peak rose above the resident set at the start, in bytes.
    public var peakResidentDeltaBytes: Int

    /// The usage between two samples of one process.
    ///
    /// - Parameters:
    ///   - before: taken as the phase began, right after ``ProcessSample/resetPeak()``.
    ///   - after: taken as it ended.
    public init(from before: ProcessSample, to after: ProcessSample) {
        userCPUSeconds = after.userCPUSeconds - before.userCPUSeconds
        systemCPUSeconds = after.systemCPUSeconds - before.systemCPUSeconds
        residentBeforeBytes = before.residentBytes
        peakResidentBytes = after.peakResidentBytes
        peakResidentDeltaBytes = max(0, after.peakResidentBytes - before.residentBytes)
    }
}
