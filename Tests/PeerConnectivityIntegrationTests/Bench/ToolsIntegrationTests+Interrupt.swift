import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

extension ToolsIntegrationTests {
    @Test("--interrupt-at 50: the link is cut halfway, resumed, and only the missing half crosses again")
    func resourceInterruptedAndResumed() async throws {
        let folder = try ScratchDirectory("results").url
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
        #expect(try await runner.exitStatus() == 0, "\(runner.output) \(runner.errors)")
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
        #expect(statistics.blockDigest == "XXH3-64", "two tools of this version agree on XXH3-64")
        let fraction = try #require(resources.sentAfterResumeFraction)
        #expect(fraction == Double(afterResume) / Double(bytes))
        #expect(runner.output.contains("cut at 3"), "\(runner.output)")
        #expect(runner.output.contains("the reflector confirmed the whole file's SHA-256"), "\(runner.output)")
        #expect(runner.output.contains("read ") && runner.output.contains(", hash "))
        _ = try await reflector.line(containing: "ended runner=test-runner-cut")
        #expect(
            reflector.output.contains("test-runner cut resource reconnection\" stream-window=4194304 reconnection=on")
        )
        #expect(reflector.output.contains("resumed runner=test-runner-cut"), "\(reflector.output)")
        #expect(reflector.output.components(separatedBy: "sha256=\(resources.sha256)").count - 1 == 1)
        // Confirmed resources are deleted, kept blocks of the cut attempt too.
        #expect(try FileManager.default.contentsOfDirectory(atPath: landing.path).isEmpty)

        // A runner that does not ask for reconnection gets none: its echoes go the usual way.
        var plainData = RunnerConfiguration(
            plan: TestPlan(sizes: [64], count: 20, warmup: 2, timeoutSeconds: 60),
            target: .direct(host: "127.0.0.1", port: port),
            runName: "plain-data",
            connectTimeout: Self.connectTimeout
        )
        plainData.encryption = .none
        let data = try await BenchmarkRunner.run(plainData)
        #expect(data.error == nil, "\(data.error ?? "")")
        #expect(data.results.first?.echoed == 20)
        let invited = try #require(try await reflector.line(containing: "invited by runner=test-runner-plain-data"))
        #expect(!invited.contains("reconnection"), "\(invited)")
        try await stop(reflector, with: SIGTERM)
    }

    @Test("--interrupt-at against a reflector that gives no reconnection: the transfer fails, saying why")
    func interruptWithoutReconnection() async throws {
        let (reflector, port, _) = try await startReflector([
            "--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo", "--encryption", "none", "--no-reconnection",
        ])
        #expect(reflector.output.contains("reconnection=false"))
        let path = try ScratchDirectory("results").url.appendingPathComponent("not-resumed.json").path
        let runner = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "resource", "--bytes", "\(16 << 20)", "--interrupt-at", "50", "--encryption", "none",
                "--connect", "127.0.0.1:\(port)", "--output", path, "--quiet",
            ]
        )
        #expect(try await runner.exitStatus() == 1, "\(runner.output) \(runner.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
        let transfer = try #require(document.resources?.transfers.first)
        #expect(transfer.outcome == .failed && transfer.interruptedAtBytes != nil)
        #expect(transfer.error?.contains("it was not resumed") == true, "\(transfer.error ?? "")")
        #expect(runner.errors.contains("--no-reconnection"), "\(runner.errors)")
        try await stop(reflector, with: SIGTERM)
    }

    @Test("a runner's invitation context asks for reconnection by its last word, whatever the run's name")
    func invitationContext() {
        let asks = RunnerInvitation.context(runName: "lab", test: .resource, reconnects: true)
        #expect(String(decoding: asks, as: UTF8.self) == "test-runner lab resource reconnection")
        #expect(RunnerInvitation.asksForReconnection(asks))
        for name in ["lab", "x reconnection", "reconnection"] {
            let context = RunnerInvitation.context(runName: name, test: .data, reconnects: false)
            #expect(!RunnerInvitation.asksForReconnection(context), "\(name)")
        }
        #expect(!RunnerInvitation.asksForReconnection(Data("an app reconnection".utf8)))
    }

    @Test("--interrupt-at outside 0 < PCT < 100, or with another test: refused with what would do")
    func interruptAtRefused() async throws {
        for value in ["0", "100", "150", "nan"] {
            let refused = try ToolProcess(
                "test-runner",
                ["run", "--test", "resource", "--interrupt-at", value, "--connect", "127.0.0.1:9"]
            )
            #expect(try await refused.exitStatus() == 64, "\(value)")
            #expect(
                refused.errors.contains("--interrupt-at takes a percentage of the file strictly between 0 and 100"),
                "\(value): \(refused.errors)"
            )
        }
        let otherTest = try ToolProcess("test-runner", ["run", "--test", "stream", "--interrupt-at", "50"])
        #expect(try await otherTest.exitStatus() == 64)
        #expect(otherTest.errors.contains("--interrupt-at applies to --test resource only"), "\(otherTest.errors)")
    }
}
