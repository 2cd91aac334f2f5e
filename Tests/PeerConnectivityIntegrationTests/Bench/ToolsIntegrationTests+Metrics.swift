import Foundation
import Testing

@testable import PeerConnectivityBench

extension ToolsIntegrationTests {
    /// The value of the first sample of `name` (any labels) in Prometheus's text format.
    static func sample(_ name: String, in exposition: String) -> Double? {
        exposition.split(separator: "\n")
            .first { $0.hasPrefix("\(name){") || $0.hasPrefix("\(name) ") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    @Test("--metrics-port 0: GET /metrics on loopback shows the runner's connection, handshake and bytes")
    func prometheusMetrics() async throws {
        let (reflector, port, _) = try await startReflector([
            "--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo", "--metrics-port", "0",
        ])
        let ready = try #require(try await reflector.line(containing: "ready"))
        let metricsPort = try #require(ToolProcess.value("metrics-port", in: ready))
        #expect(metricsPort != 0)

        let document = try await BenchmarkRunner.run(
            RunnerConfiguration(
                plan: TestPlan(sizes: [1000], count: 20, warmup: 2, window: 2, timeoutSeconds: 60),
                target: .direct(host: "127.0.0.1", port: port),
                runName: "metrics",
                connectTimeout: Self.connectTimeout
            )
        )
        #expect(document.error == nil, "\(document.error ?? "")")

        let (status, body) = try PlainHTTP.get(port: metricsPort, path: "/metrics")
        #expect(status == 200)
        #expect((Self.sample("peerconnectivity_connections_opened_total", in: body) ?? 0) >= 1, "\(body)")
        #expect((Self.sample("peerconnectivity_handshakes_completed_total", in: body) ?? 0) >= 1)
        #expect((Self.sample("peerconnectivity_bytes_received_total", in: body) ?? 0) >= 20 * 1000)
        #expect(body.contains("peerconnectivity_handshake_duration_seconds_bucket"))
        #expect(try PlainHTTP.get(port: metricsPort, path: "/").status == 404)
        try await stop(reflector, with: SIGTERM)
    }

    @Test("no --metrics-port: no metrics port in the ready line")
    func noMetricsByDefault() async throws {
        let (reflector, _, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo"])
        let ready = try #require(try await reflector.line(containing: "ready"))
        #expect(ToolProcess.value("metrics-port", in: ready) == nil)
        try await stop(reflector, with: SIGTERM)
    }
}
