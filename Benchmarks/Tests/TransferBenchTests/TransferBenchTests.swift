import Foundation
import PeerConnectivityBench
import Testing
import transfer_bench

/// transfer-bench's own accounting: memory and CPU per phase, and its result files.
@Suite("transfer-bench")
struct TransferBenchTests {
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
