import Foundation

/// The text report of `test-runner report`: every size of every run, then each run against the raw-tcp
/// baseline as ratios.
public enum ComparisonTable {
    /// Renders the report: the message tests' sizes and ratios, then the stream and resource tests.
    ///
    /// - Parameter documents: result documents.
    /// - Returns: the text, lines ending in newlines.
    public static func render(_ documents: [BenchmarkDocument]) -> String {
        var lines: [String] = []
        if documents.contains(where: \.test.isMessageTest) { lines += messageLines(documents) }
        let transfers = documents.filter { !$0.test.isMessageTest }.sorted { $0.startedAt < $1.startedAt }
        if !transfers.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += transferLines(transfers)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Streams and resources: one row per run.
    private static func transferLines(_ documents: [BenchmarkDocument]) -> [String] {
        let lines = [
            "Streams and resources: throughput in MB/s (10^6 bytes/s); stream: first echo byte, resource: "
                + "confirmation, p50 in ms."
        ]
        var rows = [
            ["run", "items", "bytes each", "done", "corrupt", "failed", "timed out", "MB/s out", "MB/s back", "p50 ms"]
        ]
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        for document in documents {
            let oneWay = document.plan.oneWay == true ? " one-way" : ""
            let label =
                "\(document.test.rawValue)\(oneWay) \(document.name) \(formatter.string(from: document.startedAt))"
            if let streams = document.streams {
                rows.append(
                    [
                        label, "\(streams.streamCount)", ReportSeries.sizeLabel(streams.bytesPerStream),
                        "\(streams.completed)", "\(streams.corrupted)", "\(streams.failed)", "\(streams.timedOut)",
                        number(streams.sentBytesPerSecond / 1e6),
                        document.plan.oneWay == true ? "-" : number(streams.receivedBytesPerSecond / 1e6),
                        document.plan.oneWay == true
                            ? "-" : number(Double(streams.timeToFirstByte.p50Nanoseconds) / 1e6),
                    ]
                )
            }
            if let bulk = document.bulk {
                for (direction, figures) in [("out", bulk.forward), ("back", bulk.reverse)] {
                    guard let figures else { continue }
                    rows.append(
                        [
                            "\(label) \(direction)", "\(bulk.streamCount)", "\(Int(bulk.timeSeconds)) s",
                            "\(bulk.streamCount - figures.failedStreams)", "\(figures.corruptedStreams)",
                            "\(figures.failedStreams)", "0",
                            direction == "out" ? number(figures.bytesPerSecond / 1e6) : "-",
                            direction == "back" ? number(figures.bytesPerSecond / 1e6) : "-", "-",
                        ]
                    )
                }
            }
            if let resources = document.resources {
                rows.append(
                    [
                        label, "\(resources.planned)", ReportSeries.sizeLabel(resources.bytes),
                        "\(resources.completed)",
                        "\(resources.corrupted)", "\(resources.failed)", "\(resources.timedOut)",
                        number(resources.bytesPerSecond / 1e6), "-",
                        number(Double(resources.confirmationTime.p50Nanoseconds) / 1e6),
                    ]
                )
            }
        }
        return lines + table(rows)
    }

    /// Every size of every message run, then each data run against the raw-tcp baseline.
    private static func messageLines(_ documents: [BenchmarkDocument]) -> [String] {
        let (series, pairs, refusals) = ReportSeries.ordered(documents)
        var lines = ["Round trips in microseconds; throughput in MB/s (10^6 bytes/s echoed back)."]
        let header = [
            "run", "size", "sent", "lost", "corrupt", "dup", "reorder", "p50", "p90", "p99", "p99.9", "max", "MB/s",
        ]
        var rows = [header]
        for run in series {
            for point in run.points {
                let result = point.result
                let trip = result.roundTrip
                rows.append(
                    [
                        run.label, ReportSeries.sizeLabel(point.size), "\(result.sent)", "\(result.lost)",
                        "\(result.corrupted)", "\(result.duplicated)", "\(result.reordered)",
                        micro(trip.p50Nanoseconds), micro(trip.p90Nanoseconds), micro(trip.p99Nanoseconds),
                        micro(trip.p999Nanoseconds), micro(trip.maxNanoseconds),
                        number(result.throughput.receivedBytesPerSecond / 1e6),
                    ]
                )
            }
        }
        lines += table(rows)
        for (ours, raw) in pairs {
            lines.append("")
            lines.append("\(ours.label) against \(raw.label) (ours / raw; throughput: ours as % of raw)")
            var ratios = [["size", "p50 ratio", "p99 ratio", "throughput"]]
            for point in ours.points {
                guard let base = raw.points.first(where: { $0.size == point.size })?.result else { continue }
                let ourTrip = point.result.roundTrip
                ratios.append(
                    [
                        ReportSeries.sizeLabel(point.size),
                        ratio(ourTrip.p50Nanoseconds, base.roundTrip.p50Nanoseconds),
                        ratio(ourTrip.p99Nanoseconds, base.roundTrip.p99Nanoseconds),
                        percent(point.result.throughput.receivedBytesPerSecond, base.throughput.receivedBytesPerSecond),
                    ]
                )
            }
            lines += table(ratios)
        }
        if !refusals.isEmpty { lines.append("") }
        lines += refusals
        return lines
    }

    /// Left-aligns the first column, right-aligns the others.
    private static func table(_ rows: [[String]]) -> [String] {
        guard let columns = rows.first?.count else { return [] }
        let widths = (0..<columns).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
    }

    private static func micro(_ nanoseconds: UInt64) -> String {
        number(Double(nanoseconds) / 1e3)
    }

    /// Three significant digits at least, no exponent.
    static func number(_ value: Double) -> String {
        switch abs(value) {
        case 100...: return String(format: "%.0f", value)
        case 10..<100: return String(format: "%.1f", value)
        case 1..<10: return String(format: "%.2f", value)
        default: return String(format: "%.3f", value)
        }
    }

    private static func ratio(_ ours: UInt64, _ raw: UInt64) -> String {
        raw > 0 ? String(format: "%.2fx", Double(ours) / Double(raw)) : "-"
    }

    private static func percent(_ ours: Double, _ raw: Double) -> String {
        raw > 0 ? String(format: "%.0f%%", ours / raw * 100) : "-"
    }
}
