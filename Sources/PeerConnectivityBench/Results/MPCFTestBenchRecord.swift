import Foundation

/// One message in MPCF-TestBench's result layout (`--format mpcf-testbench`): that tool's JSON is an
/// array of these, dates as seconds since 2001-01-01 00:00:00 UTC (Foundation's reference date).
public struct MPCFTestBenchRecord: Codable, Hashable, Sendable {
    /// The message's sequence number.
    public var num: UInt64
    /// When it was sent, in seconds since the reference date.
    public var start: Double
    /// When its echo came back, in seconds since the reference date.
    public var end: Double
    /// Its size in bytes.
    public var datasize: Int
    /// MPCF-TestBench's bandwidth: the bytes that crossed both ways (2 × datasize) over the round trip,
    /// in bytes per second.
    public var bandwidth: Double

    /// Makes a record.
    ///
    /// - Parameters:
    ///   - num: the sequence number.
    ///   - start: the send time, seconds since the reference date.
    ///   - end: the echo time, seconds since the reference date.
    ///   - datasize: the size in bytes.
    ///   - roundTripNanoseconds: the round trip, measured (more precise than `end - start`).
    public init(num: UInt64, start: Double, end: Double, datasize: Int, roundTripNanoseconds: UInt64) {
        self.num = num
        self.start = start
        self.end = end
        self.datasize = datasize
        bandwidth = roundTripNanoseconds > 0 ? Double(2 * datasize) / (Double(roundTripNanoseconds) / 1e9) : 0
    }

    /// The intact echoes of a document's samples, in order; empty when it has no samples.
    ///
    /// - Parameter document: a run recorded with samples.
    /// - Returns: one record per echoed message.
    public static func records(from document: BenchmarkDocument) -> [MPCFTestBenchRecord] {
        let origin = document.startedAt.timeIntervalSinceReferenceDate
        return document.results.flatMap { result in
            (result.samples ?? []).compactMap { sample in
                guard sample.outcome == .echoed, let received = sample.receivedNanoseconds else { return nil }
                return MPCFTestBenchRecord(
                    num: sample.sequence,
                    start: origin + Double(sample.sentNanoseconds) / 1e9,
                    end: origin + Double(received) / 1e9,
                    datasize: sample.size,
                    roundTripNanoseconds: received - sample.sentNanoseconds
                )
            }
        }
    }

    /// The JSON array MPCF-TestBench writes, pretty-printed with sorted keys.
    ///
    /// - Parameter records: the records.
    /// - Throws: an `EncodingError` (not expected).
    public static func encoded(_ records: [MPCFTestBenchRecord]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(records)
    }
}
