import BenchmarkPairs
import BenchmarkSupport
import PeerConnectivityBench

extension InProcessReflector {
    /// Runs `count` sessions against the reflector, one after another, and waits until it has let the
    /// last one go.
    ///
    /// - Parameter count: sessions.
    /// - Throws: when a session fails, or the reflector still serves one 5 s after the last left.
    func churn(_ count: Int) async throws {
        try await SessionChurn.run(host: "127.0.0.1", port: port, count: count, encryption: encryption, first: sessions)
        sessions += count
        try await waitUntilIdle()
    }
}
