import Foundation

/// The document `security-bench` writes: handshake times with `.required` and bulk throughput
/// encrypted against unencrypted, measured in one run on loopback.
struct SecurityBenchResult: Codable {
    struct Plan: Codable {
        var connects: Int
        var bulkMessages1MiB: Int
        var rounds: Int
    }

    struct Handshake: Codable {
        /// Invite (connectPeer) to connected, one new session each, encryption required on both sides.
        var requiredMilliseconds: [Double]
        var requiredP50: Double
        var requiredP99: Double
        /// The same with encryption none on both sides, for comparison.
        var plainP50: Double
    }

    struct Throughput: Codable {
        /// Bytes per second of 1 MiB messages one way, per round, unencrypted then encrypted.
        var plainBytesPerSecond: [Double]
        var encryptedBytesPerSecond: [Double]
        /// Median encrypted over median unencrypted.
        var ratio: Double
    }

    var date: Date
    var hostname: String
    var cpus: Int
    var plan: Plan
    var handshake: Handshake
    var throughput: Throughput
    var targetsMet: [String: Bool]
}
