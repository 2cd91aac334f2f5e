import Foundation
import Testing

@testable import PeerConnectivityBench

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("Report table and chart")
struct ReportTests {
    let documents = [
        DocumentFixtures.document(test: .rawTCP, name: "base", p50Microseconds: 20),
        DocumentFixtures.document(test: .data, name: "ours<&>", p50Microseconds: 80),
    ]

    @Test("every size of every run, then ours against raw as ratios")
    func table() {
        let text = ComparisonTable.render(documents)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("data ours<&>") && $0.contains("1 MiB") })
        #expect(lines.contains { $0.hasPrefix("raw-tcp base") && $0.contains("1 KiB") })
        #expect(lines.contains { $0.contains("against raw-tcp base") })
        let oneByte = lines.first { $0.hasPrefix("1 B") && $0.contains("4.00x") }
        #expect(oneByte?.contains("25%") == true)
    }

    @Test("stream and resource runs: a row each, apart from the sizes; not in the chart")
    func transfers() {
        let all = documents + [DocumentFixtures.streamDocument(), DocumentFixtures.resourceDocument()]
        let text = ComparisonTable.render(all)
        let lines = text.split(separator: "\n").map(String.init)
        let stream = lines.first { $0.hasPrefix("stream fixture") }
        #expect(stream?.contains("1 MiB") == true && stream?.contains("210") == true, "\(text)")
        let resource = lines.first { $0.hasPrefix("resource fixture") }
        #expect(resource?.contains("64 MiB") == true && resource?.contains("134") == true, "\(text)")
        #expect(ComparisonTable.render([DocumentFixtures.resourceDocument()]).hasPrefix("Streams and resources"))
        #expect(ReportChart.render(all).components(separatedBy: "<polyline").count - 1 == 6)
    }

    @Test(
        "a run is compared only with a fair baseline: same hosts, same load, within 12 hours; else it says why"
    )
    func fairBaselines() {
        var otherHost = DocumentFixtures.document(test: .rawTCP, name: "elsewhere", p50Microseconds: 20)
        otherHost.runner.hostname = "another-machine"
        var encrypted = DocumentFixtures.document(test: .data, name: "tls", p50Microseconds: 80)
        encrypted.connection.encryption = "required"
        let later = DocumentFixtures.document(
            test: .data,
            name: "later",
            startedAt: Date(timeIntervalSince1970: 1_795_000_000 + 2 * 86_400)
        )
        var wider = DocumentFixtures.document(test: .data, name: "wider", p50Microseconds: 80)
        wider.plan.window = 8

        let (_, pairs, refusals) = ReportSeries.ordered([
            otherHost, documents[0], encrypted, later, wider, documents[1],
        ])
        #expect(pairs.map(\.ours.label).allSatisfy { $0.contains("ours") }, "only the fair run is paired")
        #expect(pairs.first?.raw.label.contains("base") == true, "with the baseline of its own hosts")
        #expect(refusals.contains { $0.contains("tls") && $0.contains("encrypted") })
        #expect(refusals.contains { $0.contains("later") && $0.contains("12 hours") })
        #expect(refusals.contains { $0.contains("wider") && $0.contains("another load") })
        let text = ComparisonTable.render([otherHost, encrypted])
        #expect(text.contains("not compared with") && text.contains("other hosts"), "\(text)")
    }

    @Test("an encrypted run is compared with a TLS baseline, a plain one with a plain baseline, never across")
    func tlsBaselines() {
        var tlsBaseline = DocumentFixtures.document(test: .rawTCP, name: "tls-base", p50Microseconds: 30)
        tlsBaseline.connection.encryption = "required"
        tlsBaseline.connection.linkSecurity = "TLS 1.3, TLS_AES_128_GCM_SHA256"
        var encrypted = DocumentFixtures.document(test: .data, name: "tls", p50Microseconds: 80)
        encrypted.connection.encryption = "required"
        encrypted.connection.linkSecurity = "TLS 1.3, TLS_AES_128_GCM_SHA256"
        var fellBack = DocumentFixtures.document(test: .data, name: "fell-back", p50Microseconds: 60)
        fellBack.connection.encryption = "optional"
        fellBack.connection.linkSecurity = "plain (not encrypted)"

        let (_, pairs, refusals) = ReportSeries.ordered([tlsBaseline, encrypted, fellBack])
        #expect(pairs.count == 1)
        #expect(pairs.first?.ours.label.contains("tls") == true && pairs.first?.raw.label.contains("tls-base") == true)
        #expect(refusals.count == 1)
        #expect(refusals.first?.contains("fell-back") == true && refusals.first?.contains("baseline is TLS") == true)

        let (_, plainPairs, _) = ReportSeries.ordered([documents[0], fellBack, encrypted])
        #expect(plainPairs.map(\.ours.label).contains { $0.contains("fell-back") }, "plain with plain")
        #expect(!plainPairs.map(\.ours.label).contains { $0.contains(" tls ") }, "never encrypted with plain")
    }

    @Test("no raw-tcp run: no ratios")
    func noBaseline() {
        #expect(!ComparisonTable.render([documents[1]]).contains("against"))
    }

    @Test("the chart is well-formed SVG with a line per percentile and run, names escaped")
    func chart() throws {
        let svg = ReportChart.render(documents)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("ours&lt;&amp;&gt;"))
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 6)  // 2 runs × (p50, p99, throughput)
        #expect(svg.contains("1 MiB") && svg.contains("stroke-dasharray"))
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
    }

    @Test("sizes read as people write them")
    func sizeLabels() {
        #expect(
            [1, 64, 1024, 1536, 65536, 1_048_576].map(ReportSeries.sizeLabel) == [
                "1 B", "64 B", "1 KiB", "1536 B", "64 KiB", "1 MiB",
            ]
        )
    }
}
