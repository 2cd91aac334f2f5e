import Benchmark
import BenchmarkPairs
import BenchmarkSupport

/// The baseline of the round trips, in the same run: 64-byte frames echoed by the tools' raw echo
/// server (`RawEchoServer`, in-process, a thread per connection, blocking sockets) over plain TCP with
/// `TCP_NODELAY`, one at a time; 1,000 per iteration. The session's round trip over this one is what the
/// library costs.
func registerRawTCPBenchmarks() {
    fixtureBenchmark(
        "RoundTrip64B.rawTCP",
        configuration: .roundTrips(mallocs: BenchmarkThresholds(absolute: [.p90: 100])),
        make: { try RawTCPPair() },
        stop: { $0.stop() }
    ) { benchmark, pair in
        let count = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        try pair.roundTrips(size: 64, count: count)
        benchmark.stopMeasurement()
    }
}
