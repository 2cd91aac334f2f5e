import BenchSupport
import Foundation

/// The JSON document flood-bench writes.
struct FloodBenchResult: Codable {
    /// The advertiser's limits during the run.
    struct Limits: Codable {
        var handshakeTimeoutSeconds: Double
        var maximumPendingHandshakes: Int
        var maximumPendingHandshakesPerAddress: Int
    }

    /// Resident memory of the process (advertiser, sessions and the flood's client side).
    struct Memory: Codable {
        var beforeBytes: Int
        var peakDuringFloodBytes: Int
        var afterBytes: Int
    }

    var schemaVersion = 1
    var date: Date
    var host: HostInfo
    var connections: Int
    var behaviours: [String]
    var limits: Limits
    /// The pause after each measured round trip, with and without the flood, in milliseconds.
    var gapMilliseconds: Int
    /// A real peer's 64-byte echo with no flood.
    var unloaded: Latency
    /// The same peer's echo while the flood opens and holds its connections.
    var duringFlood: Latency
    /// The round trips of duringFlood that started while the flood was still opening connections.
    var duringOpening: Latency
    /// duringFlood p50 / unloaded p50 (the target: at most 2).
    var p50Ratio: Double
    /// Invitation to connected of a newcomer, with no flood and during it, in milliseconds.
    var connectUnloadedMilliseconds: Double
    var connectDuringFloodMilliseconds: Double
    /// How the flood fared: how long the advertiser kept each connection.
    var flood: ConnectionFlood.Report
    var memory: Memory
}
