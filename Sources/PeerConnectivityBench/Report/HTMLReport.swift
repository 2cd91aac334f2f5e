import Foundation

/// `test-runner report --html`: one self-contained HTML page (inline SVG and CSS, nothing fetched) with,
/// for each run side by side, what ran and its figures over time: throughput (each direction), round trip
/// (p50 and p99 of each interval), the round trips' distribution and the messages lost; then, when message
/// runs are among them, the comparison table and the chart against raw TCP.
public enum HTMLReport {
    /// Renders the page.
    ///
    /// - Parameters:
    ///   - documents: result documents, shown in the order given.
    ///   - title: the page's heading.
    /// - Returns: the HTML document.
    public static func render(_ documents: [BenchmarkDocument], title: String = "PeerConnectivity results") -> String {
        var page = [
            "<!DOCTYPE html>",
            "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/>",
            "<title>\(escape(title))</title>",
            "<style>",
            "body{font-family:sans-serif;margin:24px;color:#222}",
            ".runs{display:flex;flex-wrap:wrap;gap:24px}",
            ".run{border:1px solid #ddd;border-radius:6px;padding:12px;max-width:540px}",
            ".run h2{font-size:16px;margin:0 0 6px}",
            ".facts{font-size:12px;color:#444;margin:0 0 8px;padding-left:18px}",
            ".error{color:#b00020}",
            ".none{font-size:12px;color:#777}",
            "pre{font-size:11px;overflow-x:auto}",
            "</style></head><body>",
            "<h1>\(escape(title))</h1>",
            "<div class=\"runs\">",
        ]
        for (index, document) in documents.enumerated() {
            page += run(document, index: index)
        }
        page.append("</div>")
        if documents.contains(where: { $0.test.isMessageTest }) {
            page.append("<h2>Message sizes, runs compared</h2>")
            page.append("<pre>\(escape(ComparisonTable.render(documents)))</pre>")
            page.append("<div id=\"comparison\">\(ReportChart.render(documents))</div>")
        }
        page.append("</body></html>")
        return page.joined(separator: "\n") + "\n"
    }

    /// One run's card: what ran, its figures, its charts.
    private static func run(_ document: BenchmarkDocument, index: Int) -> [String] {
        let id = "run-\(index + 1)"
        var card = [
            "<section class=\"run\" id=\"\(id)\">",
            "<h2>\(escape(document.test.rawValue)) — \(escape(document.name))</h2>",
            "<ul class=\"facts\">",
        ]
        for fact in facts(document) {
            card.append("<li>\(escape(fact))</li>")
        }
        card.append("</ul>")
        if let error = document.error {
            card.append("<p class=\"error\">\(escape(error))</p>")
        }
        let figures = plots(document, id: id)
        if figures.isEmpty {
            card.append("<p class=\"none\">No intervals or samples to draw: run with -i, or --samples.</p>")
        }
        card += figures.map { $0.render() }
        card.append("</section>")
        return card
    }

    /// What ran: when, with which tool, between which hosts, how secured; and the headline figures.
    static func facts(_ document: BenchmarkDocument) -> [String] {
        var facts = [
            Self.date(document.startedAt) + ", " + document.tool.versionLine,
            "runner \(host(document.runner))" + (document.reflector.map { "; reflector \(host($0))" } ?? ""),
        ]
        let connection = document.connection
        let addresses = [connection.localAddress, connection.remoteAddress].compactMap { $0 }
        if !addresses.isEmpty {
            facts.append(
                addresses.joined(separator: " → ") + (connection.interface.map { " via \($0)" } ?? "")
            )
        }
        facts.append(
            "encryption \(connection.encryption ?? "?")" + (connection.linkSecurity.map { ", \($0)" } ?? "")
        )
        if let bulk = document.bulk {
            for (label, direction) in [("sent", bulk.forward), ("received", bulk.reverse)] {
                guard let direction else { continue }
                facts.append(
                    "bulk \(label): \(RateFormat.automatic.string(bytesPerSecond: direction.bytesPerSecond)) over "
                        + "\(bulk.streamCount) stream\(bulk.streamCount == 1 ? "" : "s")"
                )
            }
        }
        for phase in document.responsiveness?.phases ?? [] {
            let load = [("down", phase.download), ("up", phase.upload)].compactMap { name, direction in
                direction.map { "\(RateFormat.automatic.string(bytesPerSecond: $0.bytesPerSecond)) \(name)" }
            }
            facts.append(
                "\(phase.name.rawValue): " + (load.isEmpty ? "" : load.joined(separator: ", ") + "; ")
                    + "foreign p50 \(IntervalResult.duration(phase.foreign.roundTrip.p50Nanoseconds))"
                    + (phase.selfProbes.answered > 0
                        ? ", self p50 \(IntervalResult.duration(phase.selfProbes.roundTrip.p50Nanoseconds))" : "")
                    + (phase.rpm.map { String(format: "; RPM %.0f (%@)", $0, phase.rpmBand ?? "") } ?? "")
            )
        }
        for result in document.results {
            facts.append(
                "\(ReportSeries.sizeLabel(result.size)): round trip p50 "
                    + microseconds(result.roundTrip.p50Nanoseconds) + ", p99 "
                    + microseconds(result.roundTrip.p99Nanoseconds) + "; \(result.echoed) echoed, \(result.lost) lost"
            )
        }
        return facts
    }

    /// The charts a run has data for.
    static func plots(_ document: BenchmarkDocument, id: String) -> [SVGPlot] {
        var plots: [SVGPlot] = []
        let intervals = document.intervals ?? []
        let colors = SVGPlot.palette
        // Throughput over time, each direction.
        let directions: [(String, (IntervalResult) -> Int?)] = [("sent", \.sentBytes), ("received", \.receivedBytes)]
        let rates = directions.compactMap { name, bytes -> (String, [(x: Double, y: Double)])? in
            let points = intervals.compactMap { interval -> (x: Double, y: Double)? in
                guard let value = bytes(interval), interval.seconds > 0 else { return nil }
                return (interval.endSeconds, Double(value) * 8 / interval.seconds)
            }
            return points.isEmpty ? nil : (name, points)
        }
        if !rates.isEmpty {
            let peak = rates.flatMap { $0.1.map(\.y) }.max() ?? 0
            let (scale, unit) = peak >= 1e9 ? (1e9, "Gbit/s") : peak >= 1e6 ? (1e6, "Mbit/s") : (1e3, "Kbit/s")
            var series = rates.enumerated().map { index, rate in
                SVGPlot.Series(name: rate.0, color: colors[index], points: rate.1.map { ($0.x, $0.y / scale) })
            }
            // With several streams, each one's own line, dashed, in its direction's colour, under the sums.
            let perStream: [(String, KeyPath<IntervalResult, [Int]?>)] = [
                ("sent", \.streamSentBytes), ("received", \.streamReceivedBytes),
            ]
            for (index, (name, bytes)) in perStream.enumerated() {
                let streams = intervals.map { $0[keyPath: bytes]?.count ?? 0 }.max() ?? 0
                guard streams > 1 else { continue }
                for stream in 0..<streams {
                    let points = intervals.compactMap { interval -> (x: Double, y: Double)? in
                        guard let each = interval[keyPath: bytes], each.indices.contains(stream), interval.seconds > 0
                        else { return nil }
                        return (interval.endSeconds, Double(each[stream]) * 8 / interval.seconds / scale)
                    }
                    series.append(
                        SVGPlot.Series(
                            name: stream == 0 ? "\(name), each stream" : "",
                            color: colors[index],
                            points: points,
                            dashed: true,
                            thin: true
                        )
                    )
                }
            }
            plots.append(
                SVGPlot(
                    id: "\(id)-throughput",
                    title: "Throughput over time",
                    xLabel: "seconds from the start of the test",
                    yLabel: unit,
                    series: series
                )
            )
        }
        // Round trips over time, from the intervals of message tests (responsiveness: both kinds of probes,
        // its phases shaded).
        let phases = phaseBands(intervals)
        let scale = intervals.compactMap(\.roundTripP99Nanoseconds).max() ?? 0 >= 10_000_000 ? 1e6 : 1e3
        func points(_ value: KeyPath<IntervalResult, UInt64?>) -> [(x: Double, y: Double)] {
            intervals.compactMap { interval in
                interval[keyPath: value].map { (interval.endSeconds, Double($0) / scale) }
            }
        }
        let p50 = points(\.roundTripP50Nanoseconds)
        if !p50.isEmpty {
            let kind = phases.isEmpty ? "" : "foreign "
            var series = [
                SVGPlot.Series(name: "\(kind)p50", color: colors[0], points: p50),
                SVGPlot.Series(
                    name: "\(kind)p99",
                    color: colors[0],
                    points: points(\.roundTripP99Nanoseconds),
                    dashed: true
                ),
            ]
            let own = points(\.selfRoundTripP50Nanoseconds)
            if !own.isEmpty { series.append(SVGPlot.Series(name: "self p50", color: colors[1], points: own)) }
            let datagrams = points(\.datagramRoundTripP50Nanoseconds)
            if !datagrams.isEmpty {
                series.append(SVGPlot.Series(name: "udp p50", color: colors[2], points: datagrams))
            }
            var plot = SVGPlot(
                id: "\(id)-round-trip",
                title: phases.isEmpty ? "Round trip over time" : "Round trip over time, by phase",
                xLabel: "seconds from the start of the test",
                yLabel: scale == 1e6 ? "ms" : "µs",
                series: series
            )
            plot.bands = phases
            plots.append(plot)
        }
        if let distribution = distribution(document, id: "\(id)-distribution") {
            plots.append(distribution)
        }
        plots += linkPlots(intervals, id: id)
        let lost = intervals.compactMap { interval in
            interval.messagesLost.map { (x: interval.endSeconds, y: Double($0)) }
        }
        // Drawn only when something was lost: a flat line at zero says less than the facts' "0 lost".
        if lost.contains(where: { $0.y > 0 }) {
            plots.append(
                SVGPlot(
                    id: "\(id)-loss",
                    title: "Messages lost in each interval",
                    xLabel: "seconds from the start of the test",
                    yLabel: "messages",
                    series: [SVGPlot.Series(name: "lost", color: colors[1], points: lost, steps: true)],
                    yCeiling: 1
                )
            )
        }
        return plots
    }

    /// The responsiveness test's phases as shaded stretches: each run of intervals of one phase, from the
    /// start of its first to the end of its last.
    static func phaseBands(_ intervals: [IntervalResult]) -> [SVGPlot.Band] {
        let colors = ["#bbbbbb", "#1f77b4", "#d62728", "#9467bd"]
        var bands: [SVGPlot.Band] = []
        for interval in intervals {
            guard let phase = interval.phase else { continue }
            if let last = bands.last, last.label == phase {
                bands[bands.count - 1].to = interval.endSeconds
            } else {
                let color = colors[
                    ResponsivenessPhase.Name(rawValue: phase).flatMap { name in
                        ResponsivenessPhase.Name.allCases.firstIndex(of: name)
                    } ?? 0
                ]
                bands.append(
                    SVGPlot.Band(label: phase, from: interval.startSeconds, to: interval.endSeconds, color: color)
                )
            }
        }
        return bands
    }

    /// The round trips' distribution for each size: every echoed message's when the document keeps its
    /// samples, else the steps through its percentiles (min, p50, p90, p99, p99.9, max).
    static func distribution(_ document: BenchmarkDocument, id: String) -> SVGPlot? {
        let measured = document.results.filter { $0.echoed > 0 }
        guard !measured.isEmpty else { return nil }
        let fromSamples = measured.allSatisfy { $0.samples?.isEmpty == false }
        let series = measured.enumerated().map { index, result -> SVGPlot.Series in
            var points: [(x: Double, y: Double)]
            if fromSamples, let samples = result.samples {
                let trips = samples.compactMap { sample -> Double? in
                    guard sample.outcome == .echoed, let received = sample.receivedNanoseconds,
                        received >= sample.sentNanoseconds
                    else { return nil }
                    return Double(received - sample.sentNanoseconds) / 1e3
                }
                .sorted()
                // At most 1,000 steps: the page stays small with a million samples.
                let stride = max(1, trips.count / 1_000)
                points = Swift.stride(from: 0, to: trips.count, by: stride).map {
                    (trips[$0], Double($0 + 1) / Double(trips.count))
                }
                if let last = trips.last { points.append((last, 1)) }
            } else {
                let trip = result.roundTrip
                points = [
                    (trip.minNanoseconds, 0), (trip.p50Nanoseconds, 0.5), (trip.p90Nanoseconds, 0.9),
                    (trip.p99Nanoseconds, 0.99), (trip.p999Nanoseconds, 0.999), (trip.maxNanoseconds, 1),
                ]
                .map { (Double($0.0) / 1e3, $0.1) }
            }
            return SVGPlot.Series(
                name: ReportSeries.sizeLabel(result.size),
                color: SVGPlot.palette[index % SVGPlot.palette.count],
                points: points,
                steps: true
            )
        }
        return SVGPlot(
            id: id,
            title: fromSamples ? "Round trips, distribution" : "Round trips, distribution (from percentiles)",
            xLabel: "round trip (µs)",
            yLabel: "fraction of messages",
            series: series,
            yCeiling: 1
        )
    }

    private static func host(_ host: HostInfo) -> String {
        "\(host.hostname) (\(host.cpuModel ?? "CPU unknown"), \(host.cpuCount) CPUs, \(host.kernel))"
    }

    private static func microseconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.1f µs", Double(nanoseconds) / 1e3)
    }

    private static func date(_ date: Date) -> String {
        Date.ISO8601FormatStyle().format(date)
    }

    /// Escapes text for HTML.
    static func escape(_ text: String) -> String { ReportChart.escape(text) }
}
