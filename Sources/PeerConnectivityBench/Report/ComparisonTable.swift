import Foundation

/// The text report of `test-runner report`: every size of every run, then each run against the raw-tcp
/// baseline as ratios.
public enum ComparisonTable {
    /// Renders the report.
    ///
    /// - Parameter documents: result documents.
    /// - Returns: the text, lines ending in newlines.
    public static func render(_ documents: [BenchmarkDocument]) -> String {
        let (series, pairs) = ReportSeries.ordered(documents)
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
        return lines.joined(separator: "\n") + "\n"
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
