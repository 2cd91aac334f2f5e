import Foundation
import Testing

@testable import PeerConnectivityBench

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The HTML page of `test-runner report --html`: well-formed, self-contained, one card per run with the
/// figures its data allows, drawn where the data says.
@Suite("HTML report")
struct HTMLReportTests {
    /// A bulk run with intervals: 20 Mbit/s sent each second for 3 s.
    static func bulkDocument() -> BenchmarkDocument {
        var document = DocumentFixtures.document(test: .bulk, name: "bulk<&>", sizes: [])
        document.bulk = BulkTestResult(
            streamCount: 1,
            timeSeconds: 3,
            forward: BulkDirection(sentBytes: 7_500_000, receivedBytes: 7_500_000, seconds: 3),
            reverse: nil
        )
        document.intervals = (0..<3).map { second in
            var interval = IntervalResult(startSeconds: Double(second), endSeconds: Double(second + 1))
            interval.sentBytes = 2_500_000
            return interval
        }
        return document
    }

    /// A data run with intervals of round trips and loss, and its samples.
    static func dataDocument() -> BenchmarkDocument {
        var document = DocumentFixtures.document(test: .data, name: "data", sizes: [64], samples: true)
        document.intervals = (0..<4).map { second in
            var interval = IntervalResult(startSeconds: Double(second), endSeconds: Double(second + 1))
            interval.messagesSent = 100
            interval.messagesEchoed = 99
            interval.messagesLost = second == 2 ? 5 : 0
            interval.roundTripP50Nanoseconds = 50_000
            interval.roundTripP99Nanoseconds = 90_000
            return interval
        }
        return document
    }

    func parse(_ html: String) throws -> XMLDocument {
        try XMLDocument(data: Data(html.utf8), options: [])
    }

    func ids(_ page: XMLDocument) throws -> [String] {
        try page.nodes(forXPath: "//@id").compactMap(\.stringValue)
    }

    @Test("one card per run; the figures each run's data allows, and no others; the comparison for message runs")
    func figures() throws {
        let html = HTMLReport.render([Self.bulkDocument(), Self.dataDocument()], title: "Lab <1>")
        let page = try parse(html)
        let ids = try ids(page)
        #expect(ids.filter { $0.hasPrefix("run-") && !$0.dropFirst(4).contains("-") } == ["run-1", "run-2"])
        #expect(ids.contains("run-1-throughput") && !ids.contains("run-1-round-trip"), "\(ids)")
        for figure in ["run-2-round-trip", "run-2-distribution", "run-2-loss"] {
            #expect(ids.contains(figure), "\(figure) in \(ids)")
        }
        #expect(!ids.contains("run-2-throughput"), "a data run's intervals carry no bytes")
        #expect(ids.contains("comparison"))
        #expect(html.contains("Lab &lt;1&gt;") && html.contains("bulk&lt;&amp;&gt;"), "text is escaped")
        #expect(!html.contains("http://") || !html.contains("src="), "nothing is fetched")
        #expect(!html.lowercased().contains("<script"), "no script")
    }

    /// A link sample as the runner's kernel gives it, with `retransmitted` segments since the connection opened.
    static func link(window: Int, retransmitted: Int) throws -> LinkSample {
        let json = """
            {"smoothedRoundTripNanoseconds": 21000000, "roundTripVariationNanoseconds": 1000000,
             "retransmittedSegments": \(retransmitted), "bytesRetransmitted": 0, "congestionWindowSegments": \(window),
             "segmentSize": 1448, "bytesInFlight": 0, "notSentBytes": 0, "bytesSent": 0, "bytesReceived": 0}
            """
        return try JSONDecoder().decode(LinkSample.self, from: Data(json.utf8))
    }

    @Test("each stream's line under the sum, unnamed after the first; the kernel's view; udp probes beside the others")
    func streamsLinkAndDatagrams() throws {
        var document = Self.bulkDocument()
        let retransmitted = [0, 0, 7, 7]
        document.intervals = try (0..<4).map { second in
            var interval = IntervalResult(startSeconds: Double(second), endSeconds: Double(second + 1))
            interval.sentBytes = 2_500_000
            interval.streamSentBytes = [1_250_000, 1_250_000]
            interval.link = try Self.link(window: 10 + second, retransmitted: retransmitted[second])
            interval.roundTripP50Nanoseconds = 20_000_000
            interval.roundTripP99Nanoseconds = 30_000_000
            interval.datagramRoundTripP50Nanoseconds = 19_000_000
            return interval
        }
        let plots = HTMLReport.plots(document, id: "r")
        let throughput = try #require(plots.first { $0.id == "r-throughput" })
        #expect(throughput.series.map(\.name) == ["sent", "sent, each stream", ""])
        #expect(throughput.series[1].points.map(\.y) == [10, 10, 10, 10], "1.25 MB a second: 10 Mbit/s")
        let svg = throughput.render()
        #expect(svg.contains("sent, each stream") && svg.components(separatedBy: "stroke-width=\"1\"").count - 1 == 2)
        let roundTrip = try #require(plots.first { $0.id == "r-round-trip" })
        #expect(roundTrip.series.map(\.name) == ["p50", "p99", "udp p50"])
        let window = try #require(plots.first { $0.id == "r-congestion-window" })
        #expect(window.series.first?.points.map(\.y) == [10, 11, 12, 13])
        #expect(plots.first { $0.id == "r-kernel-round-trip" }?.series.first?.points.map(\.y) == [21, 21, 21, 21])
        let retransmissions = try #require(plots.first { $0.id == "r-retransmissions" })
        #expect(retransmissions.series.first?.points.map(\.y) == [0, 0, 7, 0], "each interval's, not the total")
        // Nothing retransmitted: no chart of it; no link samples: no kernel charts at all.
        document.intervals = try document.intervals?.map { interval in
            var quiet = interval
            quiet.link = try Self.link(window: 10, retransmitted: 0)
            return quiet
        }
        #expect(!HTMLReport.plots(document, id: "r").contains { $0.id == "r-retransmissions" })
        #expect(!HTMLReport.plots(Self.dataDocument(), id: "d").contains { $0.id.hasSuffix("congestion-window") })
    }

    @Test("a responsiveness run: its phases shaded behind both kinds of probes, in ms; a line of facts each")
    func phases() throws {
        var document = DocumentFixtures.document(test: .responsiveness, name: "rpm", sizes: [])
        let names = ["idle", "idle", "download", "download", "upload", "both"]
        document.intervals = names.enumerated().map { second, phase in
            var interval = IntervalResult(startSeconds: Double(second), endSeconds: Double(second + 1))
            interval.phase = phase
            interval.roundTripP50Nanoseconds = phase == "idle" ? 1_000_000 : 150_000_000
            interval.roundTripP99Nanoseconds = phase == "idle" ? 2_000_000 : 300_000_000
            interval.selfRoundTripP50Nanoseconds = 400_000_000
            return interval
        }
        let probes = ProbeResult(sent: 10, roundTrips: [150_000_000])
        document.responsiveness = ResponsivenessResult(
            loadFlows: 8,
            phaseSeconds: 2,
            probeIntervalMilliseconds: 20,
            runnerNotSentLowWatermark: nil,
            phases: [
                ResponsivenessPhase(
                    name: .download,
                    seconds: 2,
                    download: nil,
                    upload: nil,
                    foreign: probes,
                    selfProbes: probes
                )
            ]
        )
        let plot = try #require(HTMLReport.plots(document, id: "r").first { $0.id == "r-round-trip" })
        #expect(plot.yLabel == "ms" && plot.series.map(\.name) == ["foreign p50", "foreign p99", "self p50"])
        #expect(plot.bands.map(\.label) == ["idle", "download", "upload", "both"])
        #expect(plot.bands.map(\.from) == [0, 2, 4, 5] && plot.bands.map(\.to) == [2, 4, 5, 6])
        let svg = try parse(plot.render())
        let shaded = try svg.nodes(forXPath: "//*[local-name()='rect'][@class='band']")
        #expect(shaded.count == 4)
        #expect(
            HTMLReport.facts(document).contains { $0.hasPrefix("download: foreign p50 150.0 ms") && $0.contains("RPM") }
        )
    }

    @Test("the throughput line is where the intervals put it: 20 Mbit/s at each interval's end")
    func throughputLine() throws {
        let plot = try #require(HTMLReport.plots(Self.bulkDocument(), id: "r").first)
        #expect(plot.yLabel == "Mbit/s")
        let points = try #require(plot.series.first?.points)
        #expect(points.map(\.x) == [1, 2, 3] && points.map(\.y) == [20, 20, 20])
        let svg = try parse(plot.render())
        #expect(try svg.nodes(forXPath: "//*[local-name()='polyline']").count == 1)
    }

    @Test("the distribution: from samples when kept (echoed ones only), else through the percentiles")
    func distribution() throws {
        let fromSamples = try #require(HTMLReport.distribution(Self.dataDocument(), id: "d"))
        #expect(fromSamples.title == "Round trips, distribution")
        #expect(fromSamples.series.first?.points.map(\.x) == [50, 50] && fromSamples.series.first?.points.last?.y == 1)
        var summarized = Self.dataDocument()
        summarized.results[0].samples = nil
        let fromPercentiles = try #require(HTMLReport.distribution(summarized, id: "d"))
        #expect(fromPercentiles.title.contains("from percentiles"))
        #expect(fromPercentiles.series.first?.points.map(\.y) == [0, 0.5, 0.9, 0.99, 0.999, 1])
        #expect(fromPercentiles.series.first?.points.map(\.x) == [25, 50, 75, 100, 150, 200])
    }

    @Test("axis ticks: 1, 2 or 5 times a power of ten, covering the data")
    func ticks() {
        #expect(SVGPlot.ticks(from: 0, to: 20) == [0, 5, 10, 15, 20])
        #expect(SVGPlot.ticks(from: 0, to: 1) == [0, 0.2, 0.4, 0.6000000000000001, 0.8, 1])
        let wide = SVGPlot.ticks(from: 0, to: 937)
        #expect(wide.first == 0 && (wide.last ?? 0) >= 937 && wide.count <= 11, "\(wide)")
        #expect(SVGPlot.label(1_500_000) == "1.5M" && SVGPlot.label(20_000) == "20k" && SVGPlot.label(0.25) == "0.25")
    }
}
