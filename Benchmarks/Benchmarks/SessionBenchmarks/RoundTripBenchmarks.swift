import Benchmark
import BenchmarkPairs
import BenchmarkSupport
import PeerConnectivity

/// 64-byte messages sent and echoed back one at a time (core-bench's round trip), 1,000 per iteration:
/// wall clock and mallocs are shown per round trip, throughput in round trips per second.
///
/// The client's loop runs on its session's executor, as core-bench's headline figure did. Plain,
/// encrypted, and plain with reconnection on at both ends (what numbering and acknowledging cost). Then, plain,
/// with both ends answering where they read (``Volley``): the same round trip without a task.
func registerRoundTripBenchmarks() {
    for (name, security, reconnection) in [
        ("plain", Security.plain, false), ("encrypted", .encrypted, false), ("reconnection", .plain, true),
    ] {
        fixtureBenchmark(
            "RoundTrip64B.\(name)",
            configuration: .roundTrips(mallocs: Tolerances.relative(10)),
            make: { try await LoopbackPair(encryption: security.preference, reconnection: reconnection) },
            stop: { await $0.stop() }
        ) { benchmark, pair in
            let message = LoopbackPair.message(size: 64)
            let count = benchmark.scaledIterations.count
            benchmark.startMeasurement()
            try await withTaskExecutorPreference(pair.client.taskExecutor) {
                try await pair.roundTrips(message, count: count)
            }
            benchmark.stopMeasurement()
        }
    }
    fixtureBenchmark(
        "RoundTrip64B.responder",
        configuration: .roundTrips(mallocs: Tolerances.relative(10)),
        make: { try await LoopbackPair(encryption: .none, answering: true) },
        stop: { await $0.stop() }
    ) { benchmark, pair in
        let message = LoopbackPair.message(size: 64)
        let count = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        try await pair.answeredRoundTrips(message, count: count)
        benchmark.stopMeasurement()
    }
}
