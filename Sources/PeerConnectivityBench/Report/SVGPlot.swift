import Foundation

/// One chart of the HTML report as hand-written SVG: lines over a linear x axis (seconds, or a latency for
/// a distribution) and a linear y axis from zero, with "nice" ticks, a grid, axis labels and a legend.
struct SVGPlot {
    /// One line of the chart.
    struct Series {
        /// Its name in the legend.
        var name: String
        /// Its colour, as CSS.
        var color: String
        /// Its points, in the order drawn.
        var points: [(x: Double, y: Double)]
        /// Drawn dashed.
        var dashed = false
        /// Drawn as steps (a distribution) rather than straight segments.
        var steps = false
        /// Drawn thin (one of many, under their sum).
        var thin = false
    }

    /// The figure's id in the page, for links and checks.
    var id: String
    /// The heading above the chart.
    var title: String
    /// What the x axis measures, with its unit.
    var xLabel: String
    /// What the y axis measures, with its unit.
    var yLabel: String
    /// The lines.
    var series: [Series]
    /// The least top of the y axis (1 for a fraction).
    var yCeiling: Double?
    /// Stretches of x shaded behind the lines, each labelled at its top (the responsiveness test's phases).
    var bands: [Band] = []

    /// A shaded stretch of x.
    struct Band {
        /// Its label.
        var label: String
        /// Where it starts.
        var from: Double
        /// Where it ends.
        var to: Double
        /// Its colour, drawn faint.
        var color: String
    }

    private static let width = 520.0
    private static let height = 300.0
    private static let left = 64.0
    private static let right = 16.0
    private static let top = 34.0
    private static let bottom = 62.0

    /// The colours of the runs' lines, in order.
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]

    /// The chart, as an `<svg>` element with the figure's id.
    func render() -> String {
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        let xs = (series.flatMap { $0.points.map(\.x) } + bands.flatMap { [$0.from, $0.to] }).filter(\.isFinite)
        let ys = series.flatMap { $0.points.map(\.y) }.filter(\.isFinite)
        let xTicks = Self.ticks(from: min(xs.min() ?? 0, 0), to: max(xs.max() ?? 1, (xs.min() ?? 0) + 1e-9))
        let yTicks = Self.ticks(from: 0, to: max(ys.max() ?? 1, yCeiling ?? 0, 1e-12))
        let (xLow, xHigh) = (xTicks.first ?? 0, xTicks.last ?? 1)
        let yHigh = yTicks.last ?? 1
        func x(_ value: Double) -> Double { Self.left + (value - xLow) / max(xHigh - xLow, 1e-12) * plotWidth }
        func y(_ value: Double) -> Double { Self.top + plotHeight - value / max(yHigh, 1e-12) * plotHeight }
        var svg = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(ReportChart.escape(id))\" class=\"figure\" "
                + "width=\"\(Int(Self.width))\" height=\"\(Int(Self.height))\" "
                + "viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" font-family=\"sans-serif\" font-size=\"11\">",
            "<title>\(ReportChart.escape(title))</title>",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            Self.text(Self.width / 2, 18, ReportChart.escape(title), size: 13, anchor: "middle"),
        ]
        for tick in yTicks {
            svg.append(Self.gridLine(Self.left, y(tick), Self.left + plotWidth, y(tick)))
            svg.append(Self.text(Self.left - 6, y(tick) + 4, Self.label(tick), anchor: "end"))
        }
        for tick in xTicks {
            svg.append(Self.gridLine(x(tick), Self.top, x(tick), Self.top + plotHeight))
            svg.append(Self.text(x(tick), Self.top + plotHeight + 15, Self.label(tick), anchor: "middle"))
        }
        svg.append(
            "<rect x=\"\(Self.number(Self.left))\" y=\"\(Self.number(Self.top))\" width=\"\(Self.number(plotWidth))\" "
                + "height=\"\(Self.number(plotHeight))\" fill=\"none\" stroke=\"#999\"/>"
        )
        let xMiddle = Self.left + plotWidth / 2
        svg.append(Self.text(xMiddle, Self.top + plotHeight + 32, ReportChart.escape(xLabel), anchor: "middle"))
        let yMiddle = Self.top + plotHeight / 2
        svg.append(
            "<text x=\"14\" y=\"\(Self.number(yMiddle))\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 14 \(Self.number(yMiddle)))\">\(ReportChart.escape(yLabel))</text>"
        )
        for band in bands where band.from.isFinite && band.to.isFinite && band.to > band.from {
            svg.append(
                "<rect class=\"band\" x=\"\(Self.number(x(band.from)))\" y=\"\(Self.number(Self.top))\" "
                    + "width=\"\(Self.number(x(band.to) - x(band.from)))\" height=\"\(Self.number(plotHeight))\" "
                    + "fill=\"\(band.color)\" fill-opacity=\"0.12\"><title>\(ReportChart.escape(band.label))</title></rect>"
            )
            svg.append(Self.text(x(band.from) + 3, Self.top + 12, ReportChart.escape(band.label), size: 10))
        }
        for line in series {
            let points = line.points.filter { $0.x.isFinite && $0.y.isFinite }
            guard !points.isEmpty else { continue }
            var drawn: [(Double, Double)] = []
            for (index, point) in points.enumerated() {
                if line.steps, index > 0 { drawn.append((x(point.x), y(points[index - 1].y))) }
                drawn.append((x(point.x), y(point.y)))
            }
            let path = drawn.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg.append(
                "<polyline class=\"series\" points=\"\(path)\" fill=\"none\" stroke=\"\(line.color)\" "
                    + "stroke-width=\"\(line.thin ? 1 : 2)\"\(dash)><title>\(ReportChart.escape(line.name))</title></polyline>"
            )
        }
        var legendX = Self.left
        let legendY = Self.height - 12
        // A line without a name (one of several streams after the first) has no entry of its own.
        for line in series where !line.name.isEmpty {
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            svg.append(
                "<line x1=\"\(Self.number(legendX))\" y1=\"\(Self.number(legendY - 4))\" "
                    + "x2=\"\(Self.number(legendX + 20))\" y2=\"\(Self.number(legendY - 4))\" stroke=\"\(line.color)\" "
                    + "stroke-width=\"2\"\(dash)/>"
            )
            svg.append(Self.text(legendX + 24, legendY, ReportChart.escape(line.name)))
            legendX += 34 + Double(line.name.count) * 6
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    /// Ticks at 1, 2 or 5 times a power of ten covering `low...high`, five to ten of them.
    static func ticks(from low: Double, to high: Double) -> [Double] {
        guard high > low, low.isFinite, high.isFinite else { return [low, low + 1] }
        let rough = (high - low) / 5
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        let first = floor(low / step) * step
        var ticks: [Double] = []
        var tick = first
        while ticks.count < 50 {
            ticks.append(tick)
            if tick >= high - step * 1e-9 { break }
            tick = first + Double(ticks.count) * step
        }
        return ticks
    }

    /// A tick's label: "0", "2.5", "40", "1.2k", "3M".
    static func label(_ value: Double) -> String {
        let magnitude = abs(value)
        let (scaled, suffix) =
            magnitude >= 1e6 ? (value / 1e6, "M") : magnitude >= 1e4 ? (value / 1e3, "k") : (value, "")
        return String(format: "%g", (scaled * 1_000).rounded() / 1_000) + suffix
    }

    private static func gridLine(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> String {
        "<line x1=\"\(number(x1))\" y1=\"\(number(y1))\" x2=\"\(number(x2))\" y2=\"\(number(y2))\" stroke=\"#e5e5e5\"/>"
    }

    private static func text(_ x: Double, _ y: Double, _ content: String, size: Int = 11, anchor: String = "start")
        -> String
    {
        "<text x=\"\(number(x))\" y=\"\(number(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\">\(content)</text>"
    }

    private static func number(_ value: Double) -> String { String(format: "%.1f", value) }
}
