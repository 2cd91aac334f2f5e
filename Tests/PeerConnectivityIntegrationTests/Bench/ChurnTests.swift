import Foundation
import PeerConnectivity
import PeerConnectivityBench
import Testing

/// What a long-running reflector keeps of the sessions that ended.
@Suite("Session churn against a reflector", .serialized, .timeLimit(.minutes(5 * slowdown)))
struct ChurnTests {
    @Test("1,000 sessions that come and go leave the reflector's memory within 1 MiB of where the first 100 left it")
    func memoryComesBack() async throws {
        let reflector = try ToolProcess(
            "reflector",
            [
                "--no-dnssd", "--bind", "127.0.0.1", "--port", "0", "--no-raw-echo", "--udp-ports", "ephemeral",
                "--encryption", "none", "--name", "churned",
                "--invitation-rate", "10000",
                // A runner session lives in this process, which the suite's start can stall for seconds on
                // two CPUs: the default 5 s of silence dropped one before its echo.
                "--liveness-timeout", "30",
            ]
        )
        let ready = try #require(try await reflector.line(containing: " ready "))
        let port = try #require(Int(ready.split(separator: " ").first { $0.hasPrefix("port=") }?.dropFirst(5) ?? ""))
        let pid = reflector.pid
        // A session that fails says what the reflector logged about it.
        func churn(_ count: Int, first: Int) async throws {
            do {
                try await SessionChurn.run(host: "127.0.0.1", port: port, count: count, encryption: .none, first: first)
            } catch {
                let tail = reflector.output.split(separator: "\n").suffix(12).joined(separator: "\n")
                Issue.record("\(error); the reflector (\(reflector.ending)) last wrote:\n\(tail)")
                throw error
            }
        }
        try await churn(100, first: 0)
        let started = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(500))
        let before = try #require(ProcessSample.of(pid: pid)).residentBytes
        try await churn(1_000, first: 100)
        try await Task.sleep(for: .milliseconds(500))
        let after = try #require(ProcessSample.of(pid: pid)).residentBytes
        let perSession = Double(after - before) / 1_000 / 1024
        print(
            "churn: RSS \(before >> 10) -> \(after >> 10) KiB over 1,000 sessions (\(perSession) KiB each), "
                + "\(started.duration(to: .now))"
        )
        #expect(after - before <= 1 << 20, "grew \((after - before) >> 10) KiB: \(perSession) KiB per session")
        #expect(reflector.output.components(separatedBy: "ended runner=").count - 1 == 1_100)
    }
}
