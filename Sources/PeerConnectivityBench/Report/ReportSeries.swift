import Foundation

/// One run as a report shows it: a label and, per size, the figures compared.
public struct ReportSeries: Hashable, Sendable {
    /// One size's figures.
    public struct Point: Hashable, Sendable {
        /// The message size in bytes.
        public var size: Int
        /// The size's result.
        public var result: SizeResult
    }

    /// The test.
    public var test: TestKind
    /// "data loopback 2026-11-22T10:15:00Z", "data unreliable loopback 2026-11-22T10:15:00Z".
    public var label: String
    /// When the run started.
    public var startedAt: Date
    /// One point per size, by size.
    public var points: [Point]

    /// The series of a document.
    ///
    /// - Parameter document: a result document.
    public init(_ document: BenchmarkDocument) {
        test = document.test
        startedAt = document.startedAt
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let mode = document.plan.mode == .unreliable ? " unreliable" : ""
        label = "\(document.test.rawValue)\(mode) \(document.name) \(formatter.string(from: document.startedAt))"
        points = document.results.map { Point(size: $0.size, result: $0) }.sorted { $0.size < $1.size }
    }

    /// The series of the message tests in report order (data before raw-tcp, then by start), each
    /// data one paired with the latest raw-tcp series as its baseline. Stream and resource runs have no
    /// sizes and are left out (``ComparisonTable`` lists them apart).
    ///
    /// - Parameter documents: the documents.
    /// - Returns: the series and the (ours, raw) pairs.
    public static func ordered(
        _ documents: [BenchmarkDocument]
    ) -> (series: [ReportSeries], pairs: [(ours: ReportSeries, raw: ReportSeries)]) {
        let series = documents.filter(\.test.isMessageTest).map(ReportSeries.init).sorted {
            ($0.test == .rawTCP ? 1 : 0, $0.startedAt) < ($1.test == .rawTCP ? 1 : 0, $1.startedAt)
        }
        guard let raw = series.last(where: { $0.test == .rawTCP }) else { return (series, []) }
        return (series, series.filter { $0.test != .rawTCP }.map { ($0, raw) })
    }

    /// "1 B", "64 B", "1 KiB", "1 MiB", or the number of bytes when not a whole KiB or MiB.
    ///
    /// - Parameter size: bytes.
    public static func sizeLabel(_ size: Int) -> String {
        if size >= 1 << 20, size % (1 << 20) == 0 { return "\(size >> 20) MiB" }
        if size >= 1 << 10, size % (1 << 10) == 0 { return "\(size >> 10) KiB" }
        return "\(size) B"
    }
}
