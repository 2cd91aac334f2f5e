import BenchSupport
import Foundation

/// The JSON document churn-bench writes.
struct ChurnBenchResult: Codable {
    /// One encryption preference's sessions.
    struct Run: Codable {
        var encryption: String
        var warmupSessions: Int
        var sessions: Int
        var seconds: Double
        /// The reflector's resident set after the warm-up, and after the measured sessions (each sampled
        /// a second after the last session ended).
        var residentBytesAfterWarmup: Int
        var residentBytesAfter: Int
        /// The reflector's CPU time during the measured sessions.
        var reflectorCPUSeconds: Double

        /// What the reflector kept per measured session.
        var kibibytesPerSession: Double {
            Double(residentBytesAfter - residentBytesAfterWarmup) / Double(sessions) / 1024
        }
    }

    var schemaVersion = 1
    var date: Date
    var host: HostInfo
    var runs: [Run]
}
