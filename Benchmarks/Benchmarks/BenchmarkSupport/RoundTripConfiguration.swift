import Benchmark

extension Benchmark.Configuration {
    /// The round-trip benchmarks' settings, so that the session's, the event loop's and raw TCP's round trips
    /// are measured alike: wall clock, throughput, CPU and mallocs; 2 warm-up iterations, then up to 40 of 1,000
    /// round trips each, for 3 s at most; only the mallocs checked against the recorded p90.
    ///
    /// - Parameter mallocs: the mallocs' tolerance.
    /// - Returns: the configuration.
    package static func roundTrips(mallocs: BenchmarkThresholds) -> Benchmark.Configuration {
        let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .cpuTotal, .mallocCountTotal]
        return Benchmark.Configuration(
            metrics: metrics,
            warmupIterations: 2,
            scalingFactor: .kilo,
            maxDuration: .seconds(3),
            maxIterations: 40,
            thresholds: Tolerances.only([.mallocCountTotal: mallocs], of: metrics)
        )
    }
}
