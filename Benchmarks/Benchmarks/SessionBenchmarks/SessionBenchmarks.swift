import Benchmark

/// The session benchmarks: round trips, one-way throughput and message rate, and connect time, each
/// over a direct loopback connection (no DNS-SD, no avahi-daemon), plain and encrypted.
let benchmarks: @Sendable () -> Void = {
    registerRoundTripBenchmarks()
    registerRawTCPBenchmarks()
    registerEventLoopBenchmarks()
    registerOneWayBenchmarks()
    registerConnectBenchmarks()
    registerLargeMessageBenchmarks()
}
