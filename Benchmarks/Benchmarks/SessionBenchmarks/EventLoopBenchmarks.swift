import Benchmark
import BenchmarkPairs
import BenchmarkSupport

/// The event loop's own round trip, in the same run: 64 bytes written by a SwiftNIO channel handler and echoed
/// by another over plain TCP with `TCP_NODELAY`, each side on an event loop of its own, nothing else on the path
/// (no framing, no session, no task); 1,000 per iteration. Between raw TCP's round trip (blocking sockets) and
/// the session's, it says how much of the difference is the event loop's and how much the library's.
func registerEventLoopBenchmarks() {
    fixtureBenchmark(
        "RoundTrip64B.eventLoop",
        configuration: .roundTrips(mallocs: Tolerances.relative(10)),
        make: { try await EventLoopEchoPair() },
        stop: { await $0.stop() }
    ) { benchmark, pair in
        let count = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        try await pair.roundTrips(count: count)
        benchmark.stopMeasurement()
    }
}
