import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

extension ToolsIntegrationTests {
    @Test("--test folder: a made tree and a given one, confirmed file by file; --beside-echo times probes beside them")
    func folders() async throws {
        let scratchDirectory = try ScratchDirectory("results")
        defer { scratchDirectory.remove() }
        let scratch = scratchDirectory.url
        let landing = scratch.appendingPathComponent("landing")
        let (reflector, port, _) = try await startReflector([
            "--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo", "--resource-directory", landing.path,
        ])

        // A tree made by the runner, sent twice after a warm-up, with probes beside each transfer.
        let madePath = scratch.appendingPathComponent("made.json").path
        let made = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "folder", "--files", "300", "--count", "2", "--warmup", "1", "--beside-echo", "50",
                "--connect", "127.0.0.1:\(port)", "--name", "fm", "--output", madePath,
            ]
        )
        #expect(try await made.exitStatus() == 0, "\(made.output) \(made.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: madePath)))
        #expect(document.test == .folder && document.plan.files == 300 && document.plan.besideEchoRate == 50)
        let resources = try #require(document.resources)
        #expect((resources.planned, resources.completed, resources.warmupCompleted) == (2, 2, 1))
        #expect(resources.files == 300 && (resources.filesPerSecond ?? 0) > 0)
        // 300 files of 1-64 KiB.
        #expect((300 * 1_024...300 * 65_536).contains(resources.bytes))
        #expect(
            resources.transfers.allSatisfy {
                $0.confirmedFiles == 300 && $0.confirmedSize == resources.bytes
                    && $0.confirmedSHA256 == resources.sha256
            }
        )
        #expect(made.output.contains("folder 1: completed, 300 files,"), "\(made.output)")
        // The reflector's report came, though the test had stopped reading the session's other messages.
        #expect(document.cpu?.reflector != nil && document.memory?.reflectorPeakResidentBytes != nil)
        // The same seed makes the same tree: its digest is the runner's.
        let tree = try ScratchDirectory("tree")
        defer { tree.remove() }
        let local = tree.url.appendingPathComponent("tree")
        let expected = try FolderDigest.writeTree(
            at: local,
            files: 300,
            seed: ResourceTest.folderSeed,
            pattern: StreamPattern()
        )
        #expect(expected.sha256 == resources.sha256 && expected.bytes == resources.bytes)
        let besideEcho = try #require(resources.besideEcho)
        #expect(besideEcho.ratePerSecond == 50 && besideEcho.probeBytes == LatencyProbe.size)
        // A second of idle probes, every one answered on loopback (the grace is 3 s).
        #expect(besideEcho.idle.sent >= 1 && besideEcho.idle.answered == besideEcho.idle.sent)
        #expect(besideEcho.duringTransfers.answered == besideEcho.duringTransfers.sent)
        #expect(made.output.contains("Beside the transfers, 50 probes/s"), "\(made.output)")

        // A folder of the user's own, with a file two levels down and an empty file.
        let own = scratch.appendingPathComponent("own")
        try FileManager.default.createDirectory(
            at: own.appendingPathComponent("a/b"),
            withIntermediateDirectories: true
        )
        try Data("one".utf8).write(to: own.appendingPathComponent("top.txt"))
        try Data(repeating: 7, count: 100_000).write(to: own.appendingPathComponent("a/b/deep.bin"))
        try Data().write(to: own.appendingPathComponent("a/empty"))
        let ownResult = try #require(
            try await runnerDocument(
                ["--test", "folder", "--folder", own.path, "--name", "fo"],
                port: port,
                output: scratch.appendingPathComponent("own.json").path
            ).resources
        )
        #expect(ownResult.completed == 1 && ownResult.files == 3 && ownResult.bytes == 100_003)
        #expect(ownResult.sha256 == (try FolderDigest(of: own)).sha256)

        _ = try await reflector.line(containing: "ended runner=test-runner-fo")
        #expect(reflector.output.components(separatedBy: "files=300 sha256=\(resources.sha256)").count - 1 == 3)
        // Confirmed folders are deleted.
        #expect(try FileManager.default.contentsOfDirectory(atPath: landing.path).isEmpty)

        // Neither a path that is not a folder nor --files beside --folder runs.
        let notFolder = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "folder", "--folder", own.appendingPathComponent("top.txt").path,
                "--connect", "127.0.0.1:\(port)", "--output", scratch.appendingPathComponent("bad.json").path,
            ]
        )
        #expect(try await notFolder.exitStatus() != 0)
        #expect((notFolder.output + notFolder.errors).contains("is not a folder"))
        try await stop(reflector, with: SIGTERM)
    }
}
