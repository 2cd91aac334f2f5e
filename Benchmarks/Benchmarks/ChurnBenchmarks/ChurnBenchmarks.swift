import Benchmark
import BenchmarkPairs
import BenchmarkSupport
import Foundation

/// The custom metric of the churn benchmarks: resident memory the process grew by over an iteration's
/// sessions, per session (0 when it shrank).
let residentGrowthPerSession = BenchmarkMetric.custom("Resident growth per session (B)", useScalingFactor: false)

/// Sessions that come and go against an in-process reflector (churn-bench), 1,000 per iteration after a
/// warm-up of as many: what the process keeps of each ended session, plain and encrypted.
///
/// Counted within each iteration, which ends once the reflector has let every runner go and a settling
/// pause has passed, and shown per session: allocations not freed (`mallocFreeDelta`,
/// `memoryLeakedBytes`), all allocations, and the growth of the resident set.
let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [
        .wallClock, .throughput, .mallocCountTotal, .mallocFreeDelta, .memoryLeakedBytes, .peakMemoryResident,
        residentGrowthPerSession,
    ]
    // Near zero, the memory kept per session takes absolute tolerances: 10 allocations or 1 KiB more per
    // session than recorded (raw values cover an iteration's 1,000 sessions; the custom metric is per session).
    let checked: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: Tolerances.relative(10),
        .mallocFreeDelta: BenchmarkThresholds(absolute: [.p90: 10_000]),
        .memoryLeakedBytes: BenchmarkThresholds(absolute: [.p90: 1_024_000]),
        residentGrowthPerSession: BenchmarkThresholds(absolute: [.p90: 1_024]),
        .peakMemoryResident: Tolerances.relative(25),
    ]
    for security in Security.allCases {
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            warmupIterations: 1,
            scalingFactor: .kilo,
            maxDuration: .seconds(10),
            maxIterations: 3,
            thresholds: Tolerances.only(checked, of: metrics)
        )
        fixtureBenchmark(
            "Churn.\(security)",
            configuration: configuration,
            make: { try await InProcessReflector(encryption: security.preference) },
            stop: { await $0.stop() }
        ) { benchmark, reflector in
            let count = benchmark.scaledIterations.count
            let before = residentBytes()
            benchmark.startMeasurement()
            try await reflector.churn(count)
            // Frees that follow the last goodbye (closed channels, ended tasks) land inside the measurement.
            try await Task.sleep(for: .milliseconds(200))
            benchmark.stopMeasurement()
            benchmark.measurement(residentGrowthPerSession, max(0, residentBytes() - before) / count)
        }
    }
}
