import BenchSupport
import Foundation
import PeerConnectivityBench
import Testing

/// What the benchmarks share: statistics, process samples, result files.
@Suite("BenchSupport")
struct BenchSupportTests {
    @Test("a set of samples is summarised by the runner's histogram, within its 3 significant digits")
    func latencyPercentiles() {
        let latency = LatencySummary(nanoseconds: (1...100).map { UInt64($0) * 1_000 }.shuffled())
        #expect(latency.count == 100)
        for (value, expected) in [
            (latency.p50Nanoseconds, 50_000.0), (latency.p90Nanoseconds, 90_000), (latency.p99Nanoseconds, 99_000),
        ] {
            #expect(abs(Double(value) - expected) <= expected / 1_000, "\(value) for \(expected)")
        }
        #expect(latency.maxNanoseconds == 100_000)
        #expect(LatencySummary(nanoseconds: []).p99Nanoseconds == 0)
    }

    @Test("a phase's peak rise is counted from the resident set at its start, never below zero")
    func phaseUsage() {
        let before = ProcessSample(
            residentBytes: 10 << 20,
            peakResidentBytes: 10 << 20,
            userCPUSeconds: 1,
            systemCPUSeconds: 2
        )
        let after = ProcessSample(
            residentBytes: 11 << 20,
            peakResidentBytes: 25 << 20,
            userCPUSeconds: 1.5,
            systemCPUSeconds: 2.25
        )
        let usage = PhaseUsage(from: before, to: after)
        #expect(usage.peakResidentDeltaBytes == 15 << 20)
        #expect(usage.userCPUSeconds == 0.5)
        #expect(usage.systemCPUSeconds == 0.25)
        #expect(PhaseUsage(from: after, to: before).peakResidentDeltaBytes == 0)
    }

    @Test("this process's sample reads its resident set and peak")
    func processSample() {
        let sample = ProcessSample.current()
        #expect(sample.residentBytes > 0)
        #expect(sample.peakResidentBytes >= sample.residentBytes)
    }

    @Test("a result file is JSON with sorted keys and ISO-8601 dates that decodes back")
    func resultFile() throws {
        struct Document: Codable, Equatable {
            var schemaVersion = 1
            var date: Date
            var zebra = 1
            var apple = 2
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        let document = Document(date: Date(timeIntervalSince1970: 1_800_000_000))
        let path = try ResultFile.write(
            document,
            tool: "test",
            date: document.date,
            output: directory.appendingPathComponent("nested/result.json").path
        )
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"2027-01-15T08:00:00Z\""))
        #expect(text.range(of: "apple")!.lowerBound < text.range(of: "zebra")!.lowerBound)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(Document.self, from: data) == document)
    }
}
