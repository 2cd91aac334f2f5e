import Histogram

/// Collects round-trip times in constant memory: an HdrHistogram (3 significant digits) for the
/// percentiles, exact running minimum, maximum, mean and standard deviation (Welford) beside it.
public struct LatencyRecorder: Sendable {
    /// The longest time the histogram tells apart: one hour; longer values count as one hour.
    public static let highestTrackableNanoseconds: UInt64 = 3_600_000_000_000

    private var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1,
        highestTrackableValue: highestTrackableNanoseconds,
        numberOfSignificantValueDigits: .three
    )
    private var count: UInt64 = 0
    private var minimum = UInt64.max
    private var maximum: UInt64 = 0
    private var mean = 0.0
    private var squaredDeviations = 0.0

    /// Makes an empty recorder.
    public init() {}

    /// Records one round trip.
    ///
    /// - Parameter nanoseconds: the round trip's time.
    public mutating func record(_ nanoseconds: UInt64) {
        histogram.record(min(nanoseconds, Self.highestTrackableNanoseconds))
        count += 1
        minimum = min(minimum, nanoseconds)
        maximum = max(maximum, nanoseconds)
        let value = Double(nanoseconds)
        let delta = value - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (value - mean)
    }

    /// The summary of what was recorded; all zero when nothing was.
    public var summary: LatencySummary {
        guard count > 0 else { return LatencySummary() }
        return LatencySummary(
            count: Int(count),
            minNanoseconds: minimum,
            meanNanoseconds: mean,
            p50Nanoseconds: histogram.valueAtPercentile(50),
            p90Nanoseconds: histogram.valueAtPercentile(90),
            p99Nanoseconds: histogram.valueAtPercentile(99),
            p999Nanoseconds: histogram.valueAtPercentile(99.9),
            maxNanoseconds: maximum,
            stddevNanoseconds: (squaredDeviations / Double(count)).squareRoot()
        )
    }
}
