import Foundation

/// The chart of `test-runner report`, as hand-written SVG: round-trip p50 (solid) and p99 (dashed)
/// on the left, throughput echoed back on the right, both against message size on a log-2 axis and
/// values on log-10 axes; one colour per run, the raw-tcp baseline among them.
public enum ReportChart {
    private static let width = 980.0
    private static let height = 470.0
    private static let plotWidth = 380.0
    private static let plotHeight = 300.0
    private static let top = 60.0
    private static let lefts = [80.0, 570.0]
    private static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    private static let rawColor = "#ff7f0e"

    /// A line to draw in one panel.
    private struct Line {
        var color: String
        var dashed: Bool
        var points: [(size: Int, value: Double)]
    }

    /// Renders the chart.
    ///
    /// - Parameters:
    ///   - documents: result documents.
    ///   - title: the heading.
    /// - Returns: an SVG document.
    public static func render(_ documents: [BenchmarkDocument], title: String = "PeerConnectivity against raw TCP")
        -> String
    {
        let series = ReportSeries.ordered(documents).series
        var palette = colors.makeIterator()
        let styled = series.map { run in (run, run.test == .rawTCP ? rawColor : palette.next() ?? "#333333") }
        var roundTrips: [Line] = []
        var throughputs: [Line] = []
        for (run, color) in styled {
            func line(dashed: Bool, _ value: (SizeResult) -> Double) -> Line {
                Line(color: color, dashed: dashed, points: run.points.map { ($0.size, value($0.result)) })
            }
            roundTrips.append(line(dashed: false) { Double($0.roundTrip.p50Nanoseconds) / 1e3 })
            roundTrips.append(line(dashed: true) { Double($0.roundTrip.p99Nanoseconds) / 1e3 })
            throughputs.append(line(dashed: false) { $0.throughput.receivedBytesPerSecond / 1e6 })
        }
        let sizes = series.flatMap { $0.points.map(\.size) }
        let sizeRange = (Double(sizes.min() ?? 1), Double(max(sizes.max() ?? 2, (sizes.min() ?? 1) * 2)))
        var svg = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            text(width / 2, 24, escape(title), size: 16, anchor: "middle"),
        ]
        svg += panel(
            left: lefts[0],
            title: "Round trip (µs): p50 solid, p99 dashed",
            lines: roundTrips,
            sizeRange: sizeRange
        )
        svg += panel(left: lefts[1], title: "Throughput echoed back (MB/s)", lines: throughputs, sizeRange: sizeRange)
        for (index, (run, color)) in styled.enumerated() {
            let y = top + plotHeight + 60 + Double(index) * 16
            svg.append(
                "<line x1=\"\(coordinate(lefts[0]))\" y1=\"\(coordinate(y - 4))\" x2=\"\(coordinate(lefts[0] + 24))\" "
                    + "y2=\"\(coordinate(y - 4))\" stroke=\"\(color)\" stroke-width=\"2\"/>"
            )
            svg.append(text(lefts[0] + 30, y, escape(run.label)))
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    private static func panel(
        left: Double,
        title: String,
        lines: [Line],
        sizeRange: (Double, Double)
    ) -> [String] {
        let values = lines.flatMap { $0.points.map(\.value) }.filter { $0 > 0 }
        let low = pow(10, floor(log10(values.min() ?? 1)))
        let high = max(pow(10, ceil(log10(values.max() ?? 10))), low * 10)
        func x(_ size: Double) -> Double {
            left + (log2(size) - log2(sizeRange.0)) / (log2(sizeRange.1) - log2(sizeRange.0)) * plotWidth
        }
        func y(_ value: Double) -> Double {
            top + plotHeight - (log10(value) - log10(low)) / (log10(high) - log10(low)) * plotHeight
        }
        var svg = [
            text(left + plotWidth / 2, top - 12, escape(title), size: 13, anchor: "middle"),
            "<rect x=\"\(coordinate(left))\" y=\"\(coordinate(top))\" width=\"\(coordinate(plotWidth))\" "
                + "height=\"\(coordinate(plotHeight))\" fill=\"none\" stroke=\"#999\"/>",
        ]
        var decade = low
        while decade <= high * 1.0001 {
            svg.append(gridLine(x1: left, y1: y(decade), x2: left + plotWidth, y2: y(decade)))
            svg.append(text(left - 6, y(decade) + 4, valueLabel(decade), anchor: "end"))
            decade *= 10
        }
        var tick = 1.0
        while tick <= sizeRange.1 {
            if tick >= sizeRange.0 {
                svg.append(gridLine(x1: x(tick), y1: top, x2: x(tick), y2: top + plotHeight))
                if Int(log2(tick)) % 4 == 0 {
                    svg.append(
                        text(x(tick), top + plotHeight + 16, ReportSeries.sizeLabel(Int(tick)), anchor: "middle")
                    )
                }
            }
            tick *= 4
        }
        svg.append(text(left + plotWidth / 2, top + plotHeight + 34, "message size (log scale)", anchor: "middle"))
        for line in lines {
            let points = line.points.filter { $0.value > 0 }.map { (x(Double($0.size)), y($0.value)) }
            guard !points.isEmpty else { continue }
            let path = points.map { "\(coordinate($0.0)),\(coordinate($0.1))" }.joined(separator: " ")
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg.append(
                "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>"
            )
            for (px, py) in points {
                svg.append("<circle cx=\"\(coordinate(px))\" cy=\"\(coordinate(py))\" r=\"3\" fill=\"\(line.color)\"/>")
            }
        }
        return svg
    }

    private static func gridLine(x1: Double, y1: Double, x2: Double, y2: Double) -> String {
        "<line x1=\"\(coordinate(x1))\" y1=\"\(coordinate(y1))\" x2=\"\(coordinate(x2))\" y2=\"\(coordinate(y2))\" "
            + "stroke=\"#e5e5e5\"/>"
    }

    private static func text(_ x: Double, _ y: Double, _ content: String, size: Int = 11, anchor: String = "start")
        -> String
    {
        "<text x=\"\(coordinate(x))\" y=\"\(coordinate(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\">"
            + content + "</text>"
    }

    private static func coordinate(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    private static func valueLabel(_ value: Double) -> String {
        switch value {
        case 1e6...: return "\(Int(value / 1e6))M"
        case 1e3...: return "\(Int(value / 1e3))k"
        case 1...: return "\(Int(value))"
        default: return String(format: "%g", value)
        }
    }

    /// Escapes text for XML.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
