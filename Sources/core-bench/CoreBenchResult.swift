import BenchSupport
import Foundation

/// What one run of core-bench measured, written as JSON.
struct CoreBenchResult: Codable {
    struct Measurements: Codable {
        var roundTrip64Bytes: Latency
        var throughput1MiBBytesPerSecond: Double
        var messages64BytesPerSecond: Double
    }

    struct Ratios: Codable {
        /// PeerConnectivity p50 round trip / raw TCP p50 round trip (target: at most 2).
        var roundTripP50: Double
        /// PeerConnectivity 1 MiB throughput / raw TCP (target: at least 0.7).
        var throughput1MiB: Double
        /// PeerConnectivity 64-byte messages per second / raw TCP (for information).
        var messages64Bytes: Double
    }

    struct Plan: Codable {
        var roundTrips: Int
        var warmup: Int
        var bulkMessages1MiB: Int
        var smallMessages: Int
        var connectRepetitions: Int

        /// The sessions' encryption preference (absent in results from before encryption existed, which ran plain).
        var encryption: String?
    }

    var schemaVersion = 1
    var tool = "core-bench"
    var date: Date
    var hostname: String
    var cpus: Int
    var plan: Plan
    var rawTCP: Measurements
    var peerConnectivity: Measurements
    var connectMilliseconds: [Double]
    var ratios: Ratios
    var targetsMet: [String: Bool]
}
