import Benchmark
import BenchmarkPairs
import BenchmarkSupport
import PeerConnectivity

/// A new client session dialing the in-process reflector directly, from `connectPeer` to connected (security-bench's
/// handshake time; core-bench's connect time without the DNS-SD browse): wall clock and mallocs per
/// connection. The session, and for `encrypted` its ephemeral identity, are made before measuring;
/// the disconnect comes after.
func registerConnectBenchmarks() {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    for security in Security.allCases {
        let configuration = Benchmark.Configuration(
            metrics: metrics,
            warmupIterations: 3,
            scalingFactor: .one,
            maxDuration: .seconds(3),
            maxIterations: 100,
            thresholds: Tolerances.only([.mallocCountTotal: Tolerances.relative(10)], of: metrics)
        )
        fixtureBenchmark(
            "Connect.\(security)",
            configuration: configuration,
            make: { try await InProcessReflector(encryption: security.preference) },
            stop: { await $0.stop() }
        ) { benchmark, host in
            var sessionConfiguration = Session.Configuration.default
            sessionConfiguration.joinsMesh = false
            let client = Session(
                peer: try PeerID(displayName: "bench-dialer"),
                encryptionPreference: security.preference,
                configuration: sessionConfiguration
            )
            benchmark.startMeasurement()
            let peer = try await client.connectPeer(host: "127.0.0.1", port: host.port, timeout: .seconds(10))
            benchmark.stopMeasurement()
            let encrypted = client.securityInfo(for: peer)?.isEncrypted == true
            await client.disconnect()
            // The reflector must have let the client go before the next one comes.
            try await host.waitUntilIdle()
            guard encrypted == (security == .encrypted) else {
                throw BenchmarkFailure("the connection's encryption is not \(security.preference)")
            }
        }
    }
}
