import Foundation
import Testing

@testable import PeerConnectivityBench

extension ToolsIntegrationTests {
    @Test("--interrupt-at 50: the link is cut halfway, resumed, and only the missing half crosses again")
    func resourceInterruptedAndResumed() async throws {
        let folder = try temporaryFolder()
        let landing = folder.appendingPathComponent("landing")
        // The reflector tool's default: reconnection on.
        let (reflector, port, _) = try await startReflector([
            "--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo", "--encryption", "none",
            "--resource-directory", landing.path,
        ])
        #expect(reflector.output.contains("reconnection=true"))
        let bytes = 64 << 20
        let path = folder.appendingPathComponent("interrupted.json").path
        let runner = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "resource", "--bytes", "\(bytes)", "--interrupt-at", "50", "--encryption", "none",
                "--connect", "127.0.0.1:\(port)", "--name", "cut", "--output", path,
            ]
        )
        #expect(try await runner.exitStatus(within: .seconds(90)) == 0, "\(runner.output) \(runner.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(document.plan.interruptAtPercent == 50)
        let resources = try #require(document.resources)
        #expect(resources.completed == 1)
        let transfer = try #require(resources.transfers.first)
        // The reflector confirmed the whole file: its size and SHA-256 are the runner's.
        #expect(transfer.outcome == .completed, "\(transfer.error ?? "")")
        #expect(transfer.confirmedSize == bytes && transfer.confirmedSHA256 == resources.sha256)
        let cutAt = try #require(transfer.interruptedAtBytes)
        #expect(cutAt >= UInt64(bytes / 2) && cutAt < UInt64(bytes), "cut at \(cutAt)")
        let afterResume = try #require(transfer.bytesSentAfterResume)
        // At most the half still missing, and what was in flight at the cut (the window and its block).
        #expect(Double(afterResume) <= 0.55 * Double(bytes) + Double(8 << 20), "sent after the cut: \(afterResume)")
        #expect((transfer.resumedBytes ?? 0) > 0)
        let statistics = try #require(transfer.statistics)
        #expect(statistics.blocks == 64 && statistics.blocksResumed > 0 && statistics.reopenings >= 1)
        #expect(statistics.bytesSent == cutAt + afterResume)
        #expect(statistics.bytesResumed == transfer.resumedBytes)
        #expect(statistics.readSeconds > 0 && statistics.hashSeconds > 0)
        let fraction = try #require(resources.sentAfterResumeFraction)
        #expect(fraction == Double(afterResume) / Double(bytes))
        #expect(runner.output.contains("cut at 3"), "\(runner.output)")
        #expect(runner.output.contains("the reflector confirmed the whole file's SHA-256"), "\(runner.output)")
        #expect(runner.output.contains("read ") && runner.output.contains(", hash "))
        _ = try await reflector.line(containing: "ended runner=test-runner-cut")
        #expect(reflector.output.contains("resumed runner=test-runner-cut"), "\(reflector.output)")
        #expect(reflector.output.components(separatedBy: "sha256=\(resources.sha256)").count - 1 == 1)
        // Confirmed resources are deleted, kept blocks of the cut attempt too.
        #expect(try FileManager.default.contentsOfDirectory(atPath: landing.path).isEmpty)
        try await stop(reflector, with: SIGTERM)
    }

    @Test("--interrupt-at outside 0 < PCT < 100, or with another test: refused with what would do")
    func interruptAtRefused() async throws {
        for value in ["0", "100", "150", "nan"] {
            let refused = try ToolProcess(
                "test-runner",
                ["run", "--test", "resource", "--interrupt-at", value, "--connect", "127.0.0.1:9"]
            )
            #expect(try await refused.exitStatus(within: .seconds(10)) == 64, "\(value)")
            #expect(
                refused.errors.contains("--interrupt-at takes a percentage of the file strictly between 0 and 100"),
                "\(value): \(refused.errors)"
            )
        }
        let otherTest = try ToolProcess("test-runner", ["run", "--test", "stream", "--interrupt-at", "50"])
        #expect(try await otherTest.exitStatus(within: .seconds(10)) == 64)
        #expect(otherTest.errors.contains("--interrupt-at applies to --test resource only"), "\(otherTest.errors)")
    }
}
