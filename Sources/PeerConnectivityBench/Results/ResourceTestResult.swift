/// The resource and folder tests' section of a result document (`resources`): each measured transfer,
/// and their figures together. Times are nanoseconds, throughput bytes per second.
public struct ResourceTestResult: Codable, Hashable, Sendable {
    /// The size of each file, or the bytes of the folder's files.
    public var bytes: Int
    /// The SHA-256 of the file the runner sent, or its folder's ``FolderDigest`` (all transfers send the
    /// same).
    public var sha256: String
    /// The folder test: the folder's regular files; nil for a file.
    public var files: Int?
    /// The folder test: the completed transfers' files over the sum of their transfer times.
    public var filesPerSecond: Double?
    /// `--beside-echo`: the round trips of probes on the same session, idle and while the transfers ran.
    public var besideEcho: BesideEchoResult?
    /// Measured transfers planned (`--count`).
    public var planned: Int
    /// Transfers confirmed by the reflector with the runner's size and SHA-256.
    public var completed: Int
    /// Transfers the reflector confirmed with another size or SHA-256.
    public var corrupted: Int
    /// Transfers that failed.
    public var failed: Int
    /// Transfers not done within `--duration`.
    public var timedOut: Int
    /// Warm-up transfers sent before the measured ones, and how many of them completed.
    public var warmupSent: Int
    /// Warm-up transfers completed.
    public var warmupCompleted: Int
    /// The completed transfers' bytes over the sum of their transfer times.
    public var bytesPerSecond: Double
    /// `sendResource` to `wait()` returning, over the completed transfers.
    public var transferTime: LatencySummary
    /// `wait()` returning to the confirmation, over the completed transfers.
    public var confirmationTime: LatencySummary
    /// `--interrupt-at`: the largest share of the file sent after the cut, ``ResourceResult/bytesSentAfterResume``
    /// over ``bytes``, of the completed transfers that were cut (nil when none was). A cut at 50 % that
    /// resends nothing but what was in flight gives a little over 0.5.
    public var sentAfterResumeFraction: Double?
    /// Every measured transfer, in order.
    public var transfers: [ResourceResult]

    /// Sums up the transfers.
    ///
    /// - Parameters:
    ///   - transfers: the measured transfers.
    ///   - bytes: the file's size.
    ///   - sha256: the file's SHA-256.
    ///   - warmupSent: warm-up transfers sent.
    ///   - warmupCompleted: warm-up transfers completed.
    ///   - files: the folder's files; nil for a file.
    ///   - besideEcho: the probes beside the transfers.
    public init(
        transfers: [ResourceResult],
        bytes: Int,
        sha256: String,
        warmupSent: Int,
        warmupCompleted: Int,
        files: Int? = nil,
        besideEcho: BesideEchoResult? = nil
    ) {
        self.transfers = transfers
        self.files = files
        self.besideEcho = besideEcho
        self.bytes = bytes
        self.sha256 = sha256
        self.warmupSent = warmupSent
        self.warmupCompleted = warmupCompleted
        planned = transfers.count
        completed = transfers.filter { $0.outcome == .completed }.count
        corrupted = transfers.filter { $0.outcome == .corrupted }.count
        failed = transfers.filter { $0.outcome == .failed }.count
        timedOut = transfers.filter { $0.outcome == .timedOut }.count
        var transfer = LatencyRecorder()
        var confirmation = LatencyRecorder()
        var totalNanoseconds: UInt64 = 0
        for result in transfers where result.outcome == .completed {
            if let time = result.transferNanoseconds {
                transfer.record(time)
                totalNanoseconds += time
            }
            if let time = result.confirmationNanoseconds { confirmation.record(time) }
        }
        transferTime = transfer.summary
        confirmationTime = confirmation.summary
        sentAfterResumeFraction =
            transfers.filter { $0.outcome == .completed }.compactMap(\.bytesSentAfterResume)
            .map { bytes > 0 ? Double($0) / Double(bytes) : 0 }.max()
        bytesPerSecond = totalNanoseconds > 0 ? Double(completed * bytes) / (Double(totalNanoseconds) / 1e9) : 0
        filesPerSecond = files.map {
            totalNanoseconds > 0 ? Double(completed * $0) / (Double(totalNanoseconds) / 1e9) : 0
        }
    }
}
