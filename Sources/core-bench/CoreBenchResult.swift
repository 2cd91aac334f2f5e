import BenchSupport
import Foundation
import PeerConnectivityBench

/// What one run of core-bench measured, written as JSON.
struct CoreBenchResult: Codable {
    struct Measurements: Codable {
        var roundTrip64Bytes: LatencySummary
        var throughput1MiBBytesPerSecond: Double
        var messages64BytesPerSecond: Double
        /// CPU time (user and system, both ends: the whole process) per GiB of 1 MiB messages; steadier
        /// than the throughput when the machine's other load comes and goes (absent before version 2).
        var cpuSecondsPerGiB1MiB: Double?
    }

    struct Ratios: Codable {
        /// PeerConnectivity p50 round trip / raw TCP p50 round trip, both ends' tasks on their session's
        /// executor (target: at most 2).
        var roundTripP50: Double
        /// The same with the measuring task on the default executor (the cooperative pool).
        var roundTripP50DefaultExecutor: Double
        /// PeerConnectivity 1 MiB throughput / raw TCP, the sending task on its session's executor
        /// (target: at least 0.7; before version 3 it ran on the default executor).
        var throughput1MiB: Double
        /// The same with the sending task on the default executor (absent before version 3).
        var throughput1MiBDefaultExecutor: Double?
        /// PeerConnectivity 64-byte messages per second / raw TCP (for information).
        var messages64Bytes: Double
    }

    /// One round: raw TCP and PeerConnectivity measured back to back, so that what else the machine
    /// does weighs on both alike.
    struct Round: Codable {
        var rawTCP: Measurements
        var peerConnectivity: Measurements
        var roundTrip64BytesDefaultExecutor: LatencySummary
        /// 1 MiB messages sent by a task on the default executor (absent before version 3).
        var defaultExecutor1MiB: Throughput?
        var ratios: Ratios
    }

    /// One-way throughput of 1 MiB messages and what it cost.
    struct Throughput: Codable {
        var bytesPerSecond: Double
        /// CPU time (user and system, both ends) per GiB.
        var cpuSecondsPerGiB: Double
    }

    struct Plan: Codable {
        /// Rounds the measurements were split into (absent before version 2: one).
        var rounds: Int?
        var roundTrips: Int
        var warmup: Int
        var bulkMessages1MiB: Int
        var smallMessages: Int
        var connectRepetitions: Int

        /// The sessions' encryption preference (absent in results from before encryption existed, which ran plain).
        var encryption: String?
    }

    /// 2: rounds; the totals are over all rounds and the ratios are the medians of the rounds' ratios.
    /// 3: 1 MiB messages on the session's executor in `peerConnectivity`, and on the default one beside.
    var schemaVersion = 3
    var tool = "core-bench"
    var date: Date
    var hostname: String
    var cpus: Int
    var plan: Plan
    var rawTCP: Measurements
    /// Round trips and 1 MiB throughput with the measuring task on its session's executor
    /// (`Session.taskExecutor`), the 64-byte message rate on the default one.
    var peerConnectivity: Measurements
    /// Round trips with the measuring task on the default executor, as an app that does nothing special.
    var roundTrip64BytesDefaultExecutor: LatencySummary
    /// 1 MiB messages sent by a task on the default executor (absent before version 3).
    var defaultExecutor1MiB: Throughput?
    var connectMilliseconds: [Double]
    /// The median of each ratio over the rounds.
    var ratios: Ratios
    var rounds: [Round]?
    var targetsMet: [String: Bool]
}
