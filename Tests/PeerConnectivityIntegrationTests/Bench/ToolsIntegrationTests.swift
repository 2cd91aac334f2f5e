import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

/// The real `reflector` binary on loopback, driven by the real `test-runner` binary or by the bench
/// library in this process, with the real avahi-daemon.
@Suite("reflector and test-runner on loopback", .serialized)
struct ToolsIntegrationTests {
    static let sizes = "1,1000,65536"

    /// The connection steps' time of runners in this process, whose tasks wait behind every other test's on a loaded
    /// machine: a minute, not the tool's 10 s (no test here is about it). Their plans give each echo a minute too.
    static let connectTimeout: Duration = .seconds(60) * slowdown

    /// Starts a reflector and waits for its ready line; returns it with its session and raw echo ports.
    func startReflector(_ arguments: [String]) async throws -> (ToolProcess, port: Int, rawPort: Int?) {
        // Ephemeral ports unless a test asks: the fixed defaults would collide with a reflector of another run.
        let ports =
            (arguments.contains("--port") ? [] : ["--port", "0"])
            + (arguments.contains("--raw-echo-port") || arguments.contains("--no-raw-echo")
                ? [] : ["--raw-echo-port", "0"])
        let reflector = try ToolProcess("reflector", ports + arguments)
        let ready = try #require(try await reflector.line(containing: "ready"))
        let port = try #require(ToolProcess.value("port", in: ready))
        return (reflector, port, ToolProcess.value("raw-echo-port", in: ready))
    }

    /// Runs `test-runner run` against the reflector on `port` with `arguments`, expects it to succeed, and
    /// returns the document it wrote to `output`.
    func runnerDocument(_ arguments: [String], port: Int, output: String) async throws -> BenchmarkDocument {
        let runner = try ToolProcess(
            "test-runner",
            ["run"] + arguments + ["--connect", "127.0.0.1:\(port)", "--output", output, "--quiet"]
        )
        #expect(try await runner.exitStatus() == 0, "\(runner.output) \(runner.errors)")
        return try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: output)))
    }

    func stop(_ reflector: ToolProcess, with signal: Int32) async throws {
        reflector.signal(signal)
        #expect(try await reflector.exitStatus() == 0)
        #expect(reflector.output.contains("stopped"))
    }

    @Test("a data sweep by DNS-SD and a raw-tcp run by --connect, decoded; a report; a clean stop")
    func sweep() async throws {
        let service = uniqueService("pcb-it")
        let folder = try ScratchDirectory("results").url
        let (reflector, port, rawPort) = try await startReflector([
            "--service", service, "--raw-echo-port", "0", "--name", "it-reflector",
        ])
        #expect(rawPort != nil)

        let dataPath = folder.appendingPathComponent("data.json").path
        let data = try ToolProcess(
            "test-runner",
            [
                "run", "--service", service, "--reflector", "it-reflector", "--size", Self.sizes, "--count", "50",
                "--warmup", "5", "--window", "4", "--name", "it", "--output", dataPath, "--format", "mpcf-testbench",
            ]
        )
        #expect(try await data.exitStatus() == 0, "\(data.output) \(data.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: dataPath)))
        #expect(document.test == .data && document.name == "it")
        #expect(document.results.map(\.size) == [1, 1000, 65536])
        for result in document.results {
            #expect((result.sent, result.echoed, result.lost, result.corrupted, result.stray) == (50, 50, 0, 0, 0))
            #expect((result.warmupSent, result.warmupEchoed) == (5, 5))
            #expect(result.roundTrip.count == 50 && result.roundTrip.p50Nanoseconds > 0)
            #expect(result.throughput.receivedBytesPerSecond > 0)
            #expect(result.samples?.count == 50)
        }
        #expect(document.reflector?.hostname == document.runner.hostname)
        #expect(document.connection.method == .dnsSD && document.connection.reflectorName == "it-reflector")
        #expect(document.connection.browseToFoundNanoseconds != nil)
        #expect(document.connection.inviteToConnectedNanoseconds != nil)
        // Both tools' defaults: encryption required, and the link it gave is recorded.
        #expect(document.connection.encryption == "required")
        #expect(document.connection.linkSecurity?.hasPrefix("TLS 1.3, TLS_") == true)
        #expect(reflector.output.contains("encryption=required"))
        #expect(reflector.output.contains("security=\"TLS 1.3, TLS_"))
        let mpcfData = try Data(contentsOf: folder.appendingPathComponent("data.mpcf-testbench.json"))
        #expect(try JSONDecoder().decode([MPCFTestBenchRecord].self, from: mpcfData).count == 150)

        let rawPath = folder.appendingPathComponent("raw.json").path
        let raw = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "raw-tcp", "--connect", "127.0.0.1:\(port)", "--size", Self.sizes, "--count", "50",
                "--window", "4", "--name", "it", "--output", rawPath, "--quiet",
            ]
        )
        #expect(try await raw.exitStatus() == 0, "\(raw.output) \(raw.errors)")
        #expect(raw.output == "wrote \(rawPath)\n")
        let rawDocument = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: rawPath)))
        #expect(rawDocument.test == .rawTCP && rawDocument.connection.method == .direct)
        #expect(rawDocument.connection.rawAddress == "127.0.0.1:\(rawPort ?? 0)")
        #expect(rawDocument.results.allSatisfy { $0.echoed == 50 && $0.lost == 0 })
        // Encryption required (the default): the baseline is TLS too, and says so.
        #expect(rawDocument.connection.encryption == "required")
        #expect(rawDocument.connection.linkSecurity?.hasPrefix("TLS 1.3, TLS_") == true)

        let plainPath = folder.appendingPathComponent("plain.json").path
        let plain = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "raw-tcp", "--connect", "127.0.0.1:\(port)", "--size", Self.sizes, "--count", "50",
                "--window", "4", "--name", "plain", "--output", plainPath, "--quiet", "--encryption", "none",
            ]
        )
        #expect(try await plain.exitStatus() == 0, "\(plain.output) \(plain.errors)")
        let plainDocument = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: plainPath)))
        #expect(plainDocument.connection.linkSecurity == "plain (not encrypted)")
        #expect(plainDocument.results.allSatisfy { $0.echoed == 50 && $0.lost == 0 })

        let svgPath = folder.appendingPathComponent("chart.svg").path
        let report = try ToolProcess("test-runner", ["report", dataPath, rawPath, "--svg", svgPath])
        #expect(try await report.exitStatus() == 0)
        // Both encrypted: compared like for like.
        #expect(report.output.contains("against raw-tcp it"), "\(report.output)")
        #expect(!report.output.contains("not compared"), "\(report.output)")
        #expect(FileManager.default.fileExists(atPath: svgPath))
        // The encrypted data run against the plain baseline only: refused, with the reason.
        let refused = try ToolProcess("test-runner", ["report", dataPath, plainPath, "--svg", svgPath])
        #expect(try await refused.exitStatus() == 0)
        #expect(refused.output.contains("not compared with raw-tcp plain"), "\(refused.output)")
        #expect(refused.output.contains("this run is encrypted and the baseline is plain TCP"))

        try await stop(reflector, with: SIGTERM)
        #expect(reflector.output.contains("ended runner=test-runner-it"))
        #expect(reflector.output.contains("raw TLS connection closed after"))
        #expect(reflector.output.contains("raw connection closed"))
    }

    @Test("eight runners at once, each in a session of its own")
    func eightRunners() async throws {
        let (reflector, port, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1"])
        let plan = TestPlan(sizes: [64, 4096], count: 200, warmup: 10, window: 2, timeoutSeconds: 60)
        let documents = try await withThrowingTaskGroup(of: BenchmarkDocument.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await BenchmarkRunner.run(
                        RunnerConfiguration(
                            plan: plan,
                            target: .direct(host: "127.0.0.1", port: port),
                            runName: "runner-\(index)",
                            connectTimeout: Self.connectTimeout
                        )
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(documents.count == 8)
        #expect(documents.allSatisfy { $0.results.allSatisfy { $0.echoed == 200 && $0.lost == 0 } })
        #expect(Set(documents.map(\.name)).count == 8)
        _ = try await reflector.line(containing: "ended runner=test-runner-runner-7")
        #expect(reflector.output.components(separatedBy: "connected runner=").count - 1 == 8)
        try await stop(reflector, with: SIGINT)
    }

    @Test("eight runners at once of every kind: data, unreliable data, streams, resources")
    func eightMixedRunners() async throws {
        let (reflector, port, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1"])
        let plans = [
            TestPlan(sizes: [64, 4096], count: 100, warmup: 10, window: 2, timeoutSeconds: 60),
            TestPlan(mode: .unreliable, sizes: [64, 4096], count: 100, warmup: 10, timeoutSeconds: 1),
            TestPlan(test: .stream, sizes: [], count: 1, warmup: 0, streams: 2, bytes: 1 << 20),
            TestPlan(test: .resource, sizes: [], count: 2, warmup: 0, bytes: 1 << 20),
        ]
        let documents = try await withThrowingTaskGroup(of: BenchmarkDocument.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await BenchmarkRunner.run(
                        RunnerConfiguration(
                            plan: plans[index % plans.count],
                            target: .direct(host: "127.0.0.1", port: port),
                            runName: "mixed-\(index)",
                            connectTimeout: Self.connectTimeout
                        )
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(documents.count == 8)
        for document in documents {
            switch (document.test, document.plan.mode) {
            case (.data, .reliable):
                #expect(document.results.allSatisfy { $0.echoed == 100 && $0.lost == 0 })
            case (.data, .unreliable):
                #expect(document.results.allSatisfy { $0.sent == $0.echoed + $0.lost && $0.echoed >= 80 })
            case (.stream, _):
                #expect(document.streams?.completed == 2 && document.streams?.echoedBytes == 2 << 20)
            default:
                #expect(document.resources?.completed == 2)
            }
        }
        _ = try await reflector.line(containing: "ended runner=test-runner-mixed-7")
        try await stop(reflector, with: SIGTERM)
    }

    @Test("raw-tcp by DNS-SD: the port from discoveryInfo, the reflector reached at 127.0.0.1")
    func rawByDiscovery() async throws {
        let service = uniqueService("pcb-raw")
        let (reflector, _, rawPort) = try await startReflector(["--service", service, "--raw-echo-port", "0"])
        let document = try await BenchmarkRunner.run(
            RunnerConfiguration(
                plan: TestPlan(test: .rawTCP, sizes: [8, 100], count: 100, window: 8, timeoutSeconds: 60),
                serviceType: service,
                connectTimeout: Self.connectTimeout
            )
        )
        #expect(document.connection.rawAddress == "127.0.0.1:\(rawPort ?? 0)")
        #expect(document.reflector?.cpuCount == ProcessInfo.processInfo.activeProcessorCount)
        #expect(document.results.allSatisfy { $0.echoed == 100 })
        try await stop(reflector, with: SIGTERM)
    }

    @Test("no reflector, or one without a raw echo server: clear errors")
    func failures() async throws {
        let missing = RunnerConfiguration(
            plan: TestPlan(count: 1),
            serviceType: uniqueService("pcb-none"),
            connectTimeout: .milliseconds(500)
        )
        let notFound = try await BenchmarkRunner.run(missing)
        #expect(notFound.error?.contains("was not found within") == true, "\(notFound.error ?? "no error")")
        #expect(notFound.results.isEmpty)

        let (reflector, port, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1", "--no-raw-echo"])
        let raw = RunnerConfiguration(
            plan: TestPlan(test: .rawTCP, count: 1),
            target: .direct(host: "127.0.0.1", port: port)
        )
        let noRaw = try await BenchmarkRunner.run(raw)
        #expect(noRaw.error == BenchError.noRawEchoPort.message)
        try await stop(reflector, with: SIGTERM)
    }

    @Test("streams echoed byte for byte and resources confirmed by SHA-256, through the CLI")
    func transfers() async throws {
        let folder = try ScratchDirectory("results").url
        let landing = folder.appendingPathComponent("landing")
        let (reflector, port, _) = try await startReflector([
            "--no-dnssd", "--bind", "127.0.0.1", "--resource-directory", landing.path,
        ])
        let streamPath = folder.appendingPathComponent("stream.json").path
        let stream = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "stream", "--streams", "3", "--bytes", "3000000", "--connect", "127.0.0.1:\(port)",
                "--name", "st", "--output", streamPath,
            ]
        )
        #expect(try await stream.exitStatus() == 0, "\(stream.output) \(stream.errors)")
        #expect(stream.output.contains("Streams and resources"))
        let streams = try #require(
            try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: streamPath))).streams
        )
        #expect((streams.streamCount, streams.completed, streams.corrupted) == (3, 3, 0))
        #expect(streams.sentBytes == 9_000_000 && streams.echoedBytes == 9_000_000)
        #expect(streams.sentBytesPerSecond > 0 && streams.receivedBytesPerSecond > 0)
        #expect(streams.timeToFirstByte.count == 3)
        #expect(streams.streams.allSatisfy { $0.outcome == .completed && $0.firstMismatchOffset == nil })

        let oneWayPath = folder.appendingPathComponent("one-way.json").path
        let oneWay = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "stream", "--one-way", "--streams", "2", "--bytes", "2000000", "--connect",
                "127.0.0.1:\(port)", "--name", "ow", "--output", oneWayPath, "--quiet",
            ]
        )
        #expect(try await oneWay.exitStatus() == 0, "\(oneWay.output) \(oneWay.errors)")
        let oneWayDocument = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: oneWayPath)))
        let received = try #require(oneWayDocument.streams)
        #expect(oneWayDocument.plan.oneWay == true && received.completed == 2 && received.echoedBytes == 4_000_000)
        #expect(received.sentBytesPerSecond > 0 && received.receivedBytesPerSecond == 0)
        #expect((received.deliveredBytesPerSecond ?? 0) > 0 && streams.deliveredBytesPerSecond == nil)

        let resourcePath = folder.appendingPathComponent("resource.json").path
        let resource = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "resource", "--bytes", "5000000", "--count", "2", "--warmup", "1", "--connect",
                "127.0.0.1:\(port)", "--name", "rs", "--output", resourcePath, "--quiet",
            ]
        )
        #expect(try await resource.exitStatus() == 0, "\(resource.output) \(resource.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: resourcePath)))
        let resources = try #require(document.resources)
        #expect(document.test == .resource && document.results.isEmpty && document.plan.bytes == 5_000_000)
        #expect(
            (resources.planned, resources.completed, resources.warmupSent, resources.warmupCompleted) == (2, 2, 1, 1)
        )
        #expect(resources.transfers.allSatisfy { $0.confirmedSHA256 == resources.sha256 && $0.bytesPerSecond > 0 })
        #expect(resources.confirmationTime.count == 2)
        let ended = try await reflector.line(containing: "ended runner=test-runner-rs")
        #expect(ended?.contains("streams=0 resources=3") == true, "\(ended ?? "")")
        #expect(reflector.output.components(separatedBy: "echoed bytes=3000000").count - 1 == 3)
        #expect(reflector.output.components(separatedBy: "read bytes=2000000\n").count - 1 == 2)
        #expect(reflector.output.components(separatedBy: "sha256=\(resources.sha256)").count - 1 == 3)
        // Confirmed resources are deleted.
        #expect(try FileManager.default.contentsOfDirectory(atPath: landing.path).isEmpty)

        // A file of the user's own (--file), left as it was; a folder given as one is refused.
        let own = folder.appendingPathComponent("own.bin")
        try Data((0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }).write(to: own)
        let ownDigest = try FileDigest(of: own)
        let ownDocument = try await runnerDocument(
            ["--test", "resource", "--file", own.path, "--name", "fl"],
            port: port,
            output: folder.appendingPathComponent("own.json").path
        )
        let ownResult = try #require(ownDocument.resources)
        #expect(ownDocument.plan.filePath == own.path && ownDocument.plan.bytes == nil)
        #expect(ownResult.completed == 1 && ownResult.bytes == 3_000_001 && ownResult.sha256 == ownDigest.sha256)
        #expect(ownResult.transfers.first?.confirmedSHA256 == ownDigest.sha256)
        #expect(try FileDigest(of: own) == ownDigest)
        let notFile = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "resource", "--file", landing.path, "--connect", "127.0.0.1:\(port)",
                "--output", folder.appendingPathComponent("bad.json").path,
            ]
        )
        #expect(try await notFile.exitStatus() != 0)
        #expect((notFile.output + notFile.errors).contains("is not a regular file"), "\(notFile.errors)")
        try await stop(reflector, with: SIGTERM)
    }

    @Test("a reflector that dies during a stream test: the runner says so, exits 1 and writes what completed")
    func reflectorDiesDuringStreams() async throws {
        let (reflector, port, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1"])
        let path = try ScratchDirectory("results").url.appendingPathComponent("never.json").path
        let runner = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "stream", "--streams", "2", "--bytes", "10000000000", "--duration", "30",
                "--connect", "127.0.0.1:\(port)", "--output", path, "--quiet",
            ]
        )
        _ = try await reflector.line(containing: "connected runner=")
        try await Task.sleep(for: .milliseconds(300))
        reflector.signal(SIGKILL)
        #expect(try await runner.exitStatus() == 1, "\(runner.output) \(runner.errors)")
        #expect(runner.errors.contains("left the session"), "\(runner.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(document.error?.contains("left the session") == true)
        #expect(document.streams?.streamCount == 2, "the streams' section, as far as they got")
    }

    @Test("unreliable data: echoed in datagrams, every message accounted for; too large a size refused")
    func unreliable() async throws {
        let refused = try ToolProcess("test-runner", ["run", "--mode", "unreliable", "--size", "64,70000"])
        #expect(try await refused.exitStatus() == 64)
        #expect(refused.errors.contains("--size 70000 is too large for --mode unreliable"), "\(refused.errors)")

        let (reflector, port, _) = try await startReflector(["--no-dnssd", "--bind", "127.0.0.1"])
        let folder = try ScratchDirectory("results").url
        let path = folder.appendingPathComponent("unreliable.json").path
        let runner = try ToolProcess(
            "test-runner",
            [
                "run", "--mode", "unreliable", "--connect", "127.0.0.1:\(port)", "--size", "1,1000,65000", "--count",
                "100", "--warmup", "10", "--window", "2", "--timeout", "1", "--name", "udp", "--output", path,
                "--quiet",
            ]
        )
        #expect(try await runner.exitStatus() == 0, "\(runner.output) \(runner.errors)")
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(document.plan.mode == .unreliable)
        for result in document.results {
            #expect(result.sent == 100 && result.sent == result.echoed + result.lost + result.corrupted)
            #expect(result.corrupted == 0 && result.stray == 0)
            // Loopback rarely drops a datagram, but may when a socket buffer is full: most must come back.
            #expect(result.echoed >= 80, "\(result)")
            // The warm-up's first round trip taught both sides the UDP endpoints: measured echoes are datagrams.
            #expect(result.arrivedOnConnection == 0)
        }
        try await stop(reflector, with: SIGTERM)
    }
}
