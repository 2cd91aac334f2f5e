/// Round-trip times of one size's measured messages, in nanoseconds.
///
/// Minimum, maximum, mean and standard deviation (population) are exact; the percentiles come from
/// an HdrHistogram with 3 significant digits (each is the highest value equivalent to the true one,
/// at most 0.1% above it, and never above the maximum).
public struct LatencySummary: Codable, Hashable, Sendable {
    /// The round trips measured (the intact echoes).
    public var count: Int
    /// The shortest.
    public var minNanoseconds: UInt64
    /// The mean.
    public var meanNanoseconds: Double
    /// The median.
    public var p50Nanoseconds: UInt64
    /// The 90th percentile.
    public var p90Nanoseconds: UInt64
    /// The 99th percentile.
    public var p99Nanoseconds: UInt64
    /// The 99.9th percentile.
    public var p999Nanoseconds: UInt64
    /// The longest.
    public var maxNanoseconds: UInt64
    /// The standard deviation.
    public var stddevNanoseconds: Double

    /// Makes a summary; all zero by default (nothing measured).
    ///
    /// - Parameters:
    ///   - count: round trips measured.
    ///   - minNanoseconds: the shortest.
    ///   - meanNanoseconds: the mean.
    ///   - p50Nanoseconds: the median.
    ///   - p90Nanoseconds: the 90th percentile.
    ///   - p99Nanoseconds: the 99th percentile.
    ///   - p999Nanoseconds: the 99.9th percentile.
    ///   - maxNanoseconds: the longest.
    ///   - stddevNanoseconds: the standard deviation.
    public init(
        count: Int = 0,
        minNanoseconds: UInt64 = 0,
        meanNanoseconds: Double = 0,
        p50Nanoseconds: UInt64 = 0,
        p90Nanoseconds: UInt64 = 0,
        p99Nanoseconds: UInt64 = 0,
        p999Nanoseconds: UInt64 = 0,
        maxNanoseconds: UInt64 = 0,
        stddevNanoseconds: Double = 0
    ) {
        self.count = count
        self.minNanoseconds = minNanoseconds
        self.meanNanoseconds = meanNanoseconds
        self.p50Nanoseconds = p50Nanoseconds
        self.p90Nanoseconds = p90Nanoseconds
        self.p99Nanoseconds = p99Nanoseconds
        self.p999Nanoseconds = p999Nanoseconds
        self.maxNanoseconds = maxNanoseconds
        self.stddevNanoseconds = stddevNanoseconds
    }
}

extension LatencySummary {
    /// The summary of a set of samples, through the same histogram as ``LatencyRecorder``.
    ///
    /// - Parameter samples: durations in nanoseconds; all zero when empty.
    public init(nanoseconds samples: some Sequence<UInt64>) {
        var recorder = LatencyRecorder()
        for sample in samples { recorder.record(sample) }
        self = recorder.summary
    }
}
