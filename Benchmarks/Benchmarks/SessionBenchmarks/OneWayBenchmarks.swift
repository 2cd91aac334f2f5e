import Benchmark
import BenchmarkPairs
import BenchmarkSupport
import PeerConnectivity

/// Bytes per second of the messages sent one way, in MB/s: the timed span of an iteration (the same as
/// its wall clock) over the bytes it moved, finer grained than `throughput` in messages per second.
let megabytesPerSecond = BenchmarkMetric.custom("Throughput (MB/s)", polarity: .prefersLarger, useScalingFactor: false)

/// Messages sent one way until the host confirms it counted them all (core-bench's throughput and
/// message rate, security-bench's encrypted against plain throughput), 1,000 per iteration: wall clock
/// and mallocs are per message, throughput is messages per second and ``megabytesPerSecond`` bytes.
func registerOneWayBenchmarks() {
    let metrics: [BenchmarkMetric] = [
        .wallClock, .throughput, megabytesPerSecond, .cpuTotal, .mallocCountTotal, .peakMemoryResidentDelta,
    ]
    // Mallocs per message move with how many messages each read and each flush carries: 1 MiB ones by a
    // few percent, 64-byte ones (about 4 each) by up to a fifth from run to run.
    let bulkThresholds = Tolerances.only([.mallocCountTotal: Tolerances.relative(20)], of: metrics)
    let smallThresholds = Tolerances.only([.mallocCountTotal: Tolerances.relative(40)], of: metrics)
    for security in Security.allCases {
        // 1 MiB messages: about 1 GiB an iteration, sent from the client's executor as core-bench does.
        oneWayBenchmark(
            "OneWay1MiB.\(security)",
            security: security,
            size: 1 << 20,
            onSessionExecutor: true,
            configuration: Benchmark.Configuration(
                metrics: metrics,
                warmupIterations: 1,
                scalingFactor: .kilo,
                maxDuration: .seconds(6),
                maxIterations: 10,
                thresholds: bulkThresholds
            )
        )
    }
    // 64-byte messages: the per-message cost, sent from the default executor as core-bench did; plain,
    // and plain with reconnection on at both ends.
    for (name, reconnection) in [("plain", false), ("reconnection", true)] {
        oneWayBenchmark(
            "MessageRate64B.\(name)",
            security: .plain,
            reconnection: reconnection,
            size: 64,
            onSessionExecutor: false,
            configuration: Benchmark.Configuration(
                metrics: metrics,
                warmupIterations: 10,
                scalingFactor: .kilo,
                maxDuration: .seconds(3),
                maxIterations: 1_000,
                thresholds: smallThresholds
            )
        )
    }
}

/// Registers one benchmark of `size`-byte messages sent one way.
///
/// - Parameters:
///   - name: the benchmark's name.
///   - security: plain or encrypted.
///   - reconnection: reconnection on at both ends.
///   - size: bytes per message.
///   - onSessionExecutor: whether the sending loop prefers the client session's executor.
///   - configuration: metrics, scaling and limits.
private func oneWayBenchmark(
    _ name: String,
    security: Security,
    reconnection: Bool = false,
    size: Int,
    onSessionExecutor: Bool,
    configuration: Benchmark.Configuration
) {
    fixtureBenchmark(
        name,
        configuration: configuration,
        make: { try await LoopbackPair(encryption: security.preference, reconnection: reconnection) },
        stop: { await $0.stop() }
    ) { benchmark, pair in
        let message = LoopbackPair.message(size: size)
        let count = benchmark.scaledIterations.count
        let start = ContinuousClock.now
        benchmark.startMeasurement()
        try await withTaskExecutorPreference(onSessionExecutor ? pair.client.taskExecutor : nil) {
            try await pair.oneWay(message, count: count)
        }
        benchmark.stopMeasurement()
        let seconds = start.duration(to: .now) / .seconds(1)
        benchmark.measurement(megabytesPerSecond, Int(Double(size * count) / seconds / 1e6))
    }
}
