/// Percentiles of a set of latency samples, in microseconds, as the benchmarks write them.
public struct Latency: Codable, Sendable {
    /// How many samples there were.
    public var count: Int
    /// The median.
    public var p50Microseconds: Double
    /// The 90th percentile.
    public var p90Microseconds: Double
    /// The 99th percentile.
    public var p99Microseconds: Double
    /// The largest sample.
    public var maxMicroseconds: Double

    /// Summarises samples (nearest-rank percentiles).
    ///
    /// - Parameter samples: durations in nanoseconds; all zeros when empty.
    public init(nanoseconds samples: [UInt64]) {
        let sorted = samples.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
            return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1e3
        }
        count = sorted.count
        p50Microseconds = percentile(50)
        p90Microseconds = percentile(90)
        p99Microseconds = percentile(99)
        maxMicroseconds = Double(sorted.last ?? 0) / 1e3
    }
}
