import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

@Suite("Result documents")
struct BenchmarkDocumentTests {
    @Test("encode then decode gives the same document")
    func roundTrip() throws {
        let document = DocumentFixtures.document(test: .data, samples: true)
        let decoded = try BenchmarkDocument(decoding: try document.encoded())
        #expect(decoded == document)
    }

    @Test("sorted keys, pretty-printed, ISO-8601 UTC dates with milliseconds, schema and tool version")
    func layout() throws {
        let text = String(decoding: try DocumentFixtures.document(test: .rawTCP).encoded(), as: UTF8.self)
        #expect(text.contains("\"startedAt\" : \"2026-11-18T"))
        #expect(text.contains(".250Z\""))
        #expect(text.contains("\"schemaVersion\" : 2"))
        #expect(text.contains("\"test\" : \"raw-tcp\""))
        #expect(text.contains("\"build\" : \""))
        let keys = text.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map { $0.split(separator: "\"")[1] }
        #expect(keys == keys.sorted())
        #expect(keys.first == "connection" && keys.contains("p50Nanoseconds") == false)
    }

    @Test("the tool says whether its exclusivity checks ran, in the document and in its version line")
    func exclusivityChecks() throws {
        let unchecked = ToolInfo(build: "release", exclusivityChecks: false, commit: "4102378c9f1a")
        #expect(unchecked.versionLine.hasSuffix("release, exclusivity checks off, commit 4102378c9f1a)"))
        let checked = ToolInfo(build: "release", exclusivityChecks: true, commit: "4102378c9f1a")
        let library = "PeerConnectivity \(LibraryVersion.current), wire protocol \(LibraryVersion.wireProtocol)"
        #expect(checked.versionLine.hasSuffix("(\(library), release, commit 4102378c9f1a)"))
        var document = DocumentFixtures.document(test: .rawTCP)
        document.tool = unchecked
        let text = String(decoding: try document.encoded(), as: UTF8.self)
        #expect(text.contains("\"exclusivityChecks\" : false"))
        #expect(try BenchmarkDocument(decoding: try document.encoded()).tool.exclusivityChecks == false)
        // A document written before the field: no claim either way.
        let older = text.replacingOccurrences(of: "\"exclusivityChecks\" : false,", with: "")
        #expect(try BenchmarkDocument(decoding: Data(older.utf8)).tool.exclusivityChecks == nil)
    }

    @Test("stream and resource sections: totals summed, encoded and decoded")
    func transfers() throws {
        let streams = DocumentFixtures.streamDocument()
        #expect(try BenchmarkDocument(decoding: try streams.encoded()) == streams)
        let section = try #require(streams.streams)
        #expect((section.completed, section.corrupted, section.sentBytes) == (1, 1, 2 << 20))
        #expect(abs(section.sentBytesPerSecond - Double(2 << 20) / 0.01) < 1)
        #expect(abs(section.receivedBytesPerSecond - Double(2 << 20) / 0.02) < 1)
        #expect(section.timeToFirstByte.count == 2)
        let resources = DocumentFixtures.resourceDocument()
        #expect(try BenchmarkDocument(decoding: try resources.encoded()) == resources)
        let transfers = try #require(resources.resources)
        #expect(transfers.completed == 2 && abs(transfers.bytesPerSecond - Double(64 << 20) / 0.5) < 1)
        #expect(transfers.confirmationTime.p50Nanoseconds >= 100_000_000)
        let text = String(decoding: try resources.encoded(), as: UTF8.self)
        #expect(text.contains("\"outcome\" : \"completed\"") && !text.contains("\"streams\""))
    }

    @Test("an interrupted resource: statistics and the resume's figures, encoded, summed up and printed")
    func interruptedResource() throws {
        var transfer = ResourceResult(index: 0, name: "bench-resource-x-0", bytes: 64 << 20)
        transfer.outcome = .completed
        transfer.transferNanoseconds = 1_000_000_000
        transfer.bytesPerSecond = Double(64 << 20)
        var statistics = ResourceTransferStatistics(blocks: 64)
        (statistics.blocksSent, statistics.blocksResumed, statistics.reopenings) = (66, 30, 1)
        (statistics.bytesSent, statistics.bytesResumed) = (66 << 20, 30 << 20)
        (statistics.readSeconds, statistics.hashSeconds, statistics.blockDigest) = (0.05, 0.25, "XXH3-64")
        transfer.statistics = statistics
        (transfer.interruptedAtBytes, transfer.bytesSentAfterResume, transfer.resumedBytes) =
            (32 << 20, 34 << 20, 30 << 20)
        let section = ResourceTestResult(
            transfers: [transfer],
            bytes: 64 << 20,
            sha256: String(repeating: "ab", count: 32),
            warmupSent: 0,
            warmupCompleted: 0
        )
        #expect(section.sentAfterResumeFraction == 34.0 / 64)
        let decoded = try JSONDecoder().decode(ResourceTestResult.self, from: try JSONEncoder().encode(section))
        #expect(decoded == section)
        let text = String(decoding: try JSONEncoder().encode(transfer), as: UTF8.self)
        for key in [
            "interruptedAtBytes", "bytesSentAfterResume", "resumedBytes", "hashSeconds", "blocksResumed", "blockDigest",
        ] {
            #expect(text.contains("\"\(key)\""), "\(key)")
        }
        #expect(
            transfer.line.contains(
                "64 blocks, 66 sent, 30 resumed, 1 reopening; read 0.05 s, hash 0.25 s (summed over threads), "
                    + "blocks digested with XXH3-64"
            )
        )
        #expect(transfer.line.contains("cut at 32.0 MiB (50.0 %) sent; the reflector held 30.0 MiB"))
        #expect(transfer.line.contains("sent after the cut 34.0 MiB (53.1 %)"))
        // Without a cut, neither the resume's figures nor the key.
        #expect(!DocumentFixtures.resourceDocument().resources!.transfers[0].line.contains("cut at"))
        #expect(DocumentFixtures.resourceDocument().resources?.sentAfterResumeFraction == nil)
    }

    @Test("documents written before streams and resources existed still decode")
    func olderDocuments() throws {
        let results = repositoryRoot().appendingPathComponent("results")
        let path = results.appendingPathComponent("2026-11-22T02-38-28Z-data-loopback.json")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: path))
        #expect(document.test == .data && document.streams == nil && document.resources == nil)
        #expect(document.plan.bytes == nil && document.results.allSatisfy { $0.arrivedOnConnection == nil })
    }

    @Test("the example document of docs/BENCHMARK.md decodes, is of the current schema, and encodes back as shown")
    func documentedExample() throws {
        let docs = repositoryRoot().appendingPathComponent("docs/BENCHMARK.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let example = try #require(text.components(separatedBy: "### Example").dropFirst().first)
        let block = try #require(example.components(separatedBy: "```json\n").dropFirst().first)
        let json = try #require(block.components(separatedBy: "\n```").first)
        let document = try BenchmarkDocument(decoding: Data(json.utf8))
        #expect(document.schemaVersion == BenchmarkDocument.currentSchemaVersion)
        #expect(document.test == .data && document.results.map(\.size) == [64, 1024])
        // Every key shown is one the tool writes: encoding the decoded document gives the same text back.
        #expect(String(decoding: try document.encoded(), as: UTF8.self) == json)
    }

    @Test("files that are not results are refused with the reason")
    func invalid() {
        #expect(throws: BenchError.self) { try BenchmarkDocument(decoding: Data("[]".utf8)) }
        #expect(throws: BenchError.self) {
            try BenchmarkDocument(decoding: Data("{\"schemaVersion\": 1, \"tool\": \"core-bench\"}".utf8))
        }
        let newer = Data(
            "{\"schemaVersion\": 99, \"tool\": {\"name\": \"test-runner\", \"version\": \"9\", \"build\": \"x\"}}".utf8
        )
        do {
            _ = try BenchmarkDocument(decoding: newer, path: "future.json")
            Issue.record("a newer schema was read")
        } catch {
            #expect(error.message.contains("future.json: schemaVersion 99 is newer"))
        }
    }

    @Test("the default file name: UTC start without colons, test, run name")
    func defaultPath() {
        let document = DocumentFixtures.document(test: .data, name: "loop back/1")
        #expect(document.defaultPath() == "results/runs/2026-11-18T11-06-40Z-data-loop-back-1.json")
        var unreliable = document
        unreliable.plan.mode = .unreliable
        #expect(unreliable.defaultPath() == "results/runs/2026-11-18T11-06-40Z-data-unreliable-loop-back-1.json")
    }

    @Test("MPCF-TestBench layout: echoed messages only, seconds since 2001, bandwidth both ways")
    func mpcf() throws {
        let document = DocumentFixtures.document(test: .data, sizes: [1000], samples: true)
        let records = MPCFTestBenchRecord.records(from: document)
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.num == 1 && record.datasize == 1000)
        let start = document.startedAt.timeIntervalSinceReferenceDate + 0.001
        #expect(abs(record.start - start) < 1e-6)
        #expect(abs(record.end - record.start - 0.00005) < 1e-6)
        #expect(abs(record.bandwidth - 2_000 / 0.00005) < 1)
        let json = try JSONSerialization.jsonObject(with: MPCFTestBenchRecord.encoded(records)) as? [[String: Any]]
        #expect(json?.first.map { Set($0.keys) } == ["num", "start", "end", "datasize", "bandwidth"])
    }

    @Test("a reflector's host description survives its discoveryInfo, each entry fitting a TXT string")
    func hostInfo() {
        var host = DocumentFixtures.host
        host.operatingSystem = String(repeating: "x", count: 400)
        let info = host.discoveryInfo
        #expect(info.allSatisfy { $0.key.utf8.count + 1 + $0.value.utf8.count <= 255 })
        let back = HostInfo(discoveryInfo: info)
        #expect(back?.hostname == "test-host" && back?.cpuCount == 2 && back?.cpuModel == "Test CPU")
        #expect(HostInfo(discoveryInfo: ["role": "echo"]) == nil)
        #expect(HostInfo.current().cpuCount >= 1)
    }

    @Test("the reflector's hello is read back, anything else is not a reflector")
    func hello() throws {
        let hello = ReflectorHello(name: "r", host: DocumentFixtures.host, rawEchoPort: 4242)
        #expect(try ReflectorHello(decoding: hello.encoded()) == hello)
        #expect(throws: BenchError.self) { try ReflectorHello(decoding: Data("hello".utf8)) }
    }
}
