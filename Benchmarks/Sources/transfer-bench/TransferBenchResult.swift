import Foundation
import PeerConnectivityBench

/// What one run of transfer-bench measured, written as JSON.
struct TransferBenchResult: Codable {
    struct Plan: Codable {
        /// Bytes of the resource (sent twice: alone, then with echoes).
        var resourceBytes: Int
        /// Bytes over all the streams together.
        var streamBytes: Int
        var streams: Int
        /// Bytes per `OutgoingStream.write` call.
        var streamWriteBytes: Int
        /// Echoes measured with nothing else on the connection; during the resource they go on until it ends.
        var echoes: Int
        var echoBytes: Int
        /// Raw-TCP runs of each size; the median counts.
        var rawRepetitions: Int
        /// Both sessions' encryption preference (absent in results from before the option: they encrypted).
        var encryption: String?
    }

    /// Raw TCP moving the same bytes one way on loopback, 1 MiB per write.
    struct RawRun: Codable {
        var bytes: Int
        var seconds: [Double]
        /// CPU time (user + system) of each run, both ends together: what moving the bytes costs.
        var cpuSeconds: [Double]
        /// From the median of `seconds`.
        var bytesPerSecond: Double
    }

    struct RawTCP: Codable {
        var resource: RawRun
        var streams: RawRun
    }

    /// One transfer through PeerConnectivity, end to end, and what each process spent on it.
    struct Transfer: Codable {
        var bytes: Int
        var seconds: Double
        var bytesPerSecond: Double
        var sender: PhaseUsage
        var receiver: PhaseUsage
    }

    struct Measurements: Codable {
        /// The resource alone: read from disk, hashed on both sides, written to disk, until `wait()` returns.
        var resource: Transfer
        /// The same resource while 64-byte echoes go back and forth.
        var resourceWithEchoes: Transfer
        /// All the streams at once, until the receiver has read each to its end; writers and readers on
        /// their sessions' executors (before version 2: on the default executor).
        var streams: Transfer
        /// The same with writers and readers on the default executor (absent before version 2).
        var streamsDefaultExecutor: Transfer?
        /// 64-byte echoes with nothing else on the connection.
        var echoIdle: LatencySummary
        /// 64-byte echoes while the resource transfers.
        var echoDuringResource: LatencySummary
    }

    struct Ratios: Codable {
        /// Resource throughput / raw TCP (target: at least 0.5).
        var resource: Double
        /// Resource throughput with echoes / raw TCP (for information).
        var resourceWithEchoes: Double
        /// Streams' throughput together / raw TCP (target: at least 0.7).
        var streams: Double
        /// The same on the default executor (absent before version 2).
        var streamsDefaultExecutor: Double?
    }

    /// 2: the streams run twice, on the sessions' executors (`streams`) and on the default one.
    var schemaVersion = 2
    var tool = "transfer-bench"
    var date: Date
    var host: HostInfo
    var plan: Plan
    /// Whether /proc/self/clear_refs reset the peak resident set before each phase (if not, the
    /// peaks count from each process's start, which can only overstate the deltas).
    var peakResetSupported: Bool
    var rawTCP: RawTCP
    var peerConnectivity: Measurements
    var ratios: Ratios
    var targetsMet: [String: Bool]
}
