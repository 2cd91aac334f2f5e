import Benchmark

/// What `benchmark thresholds check` compares for each metric, against the p90 in Thresholds/.
///
/// A metric a benchmark measures but does not list here would be checked strictly (no deviation
/// allowed), so every metric gets an entry: the repeatable ones (allocations, memory) a relative
/// tolerance on their p90, the timing ones (wall clock, throughput, CPU time, which move with the
/// machine's other load) none.
package enum Tolerances {
    /// No check: the metric is reported and its p90 recorded, never compared.
    package static var unchecked: BenchmarkThresholds { .none }

    /// A check that fails when the p90 is more than `percent` worse than the recorded one (and reports
    /// an improvement when it is more than `percent` better).
    ///
    /// - Parameter percent: the tolerance, in percent.
    /// - Returns: the thresholds.
    package static func relative(_ percent: Double) -> BenchmarkThresholds {
        BenchmarkThresholds(relative: [.p90: percent])
    }

    /// Tolerances for `metrics`: those in `checked` as given, every other one unchecked.
    ///
    /// - Parameters:
    ///   - metrics: the benchmark's metrics.
    ///   - checked: the tolerances of the metrics to check.
    /// - Returns: a tolerance for each metric.
    package static func only(
        _ checked: [BenchmarkMetric: BenchmarkThresholds],
        of metrics: [BenchmarkMetric]
    ) -> [BenchmarkMetric: BenchmarkThresholds] {
        var all = [BenchmarkMetric: BenchmarkThresholds]()
        for metric in metrics {
            all[metric] = checked[metric] ?? unchecked
        }
        return all
    }
}
