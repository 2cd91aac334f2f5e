import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// `test-runner run`: one plan against one reflector, one JSON document.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a test against a reflector and write its result as JSON.",
        discussion: """
            The reflector is found by DNS-SD (the first one, or --reflector NAME) or reached at --connect \
            HOST:PORT (its session port). For --test raw-tcp the reflector's raw echo port comes from its \
            discoveryInfo (key rawEchoPort) or, with --connect, from its hello message, unless --raw-port \
            gives it. Each size runs --warmup unmeasured messages, then --count measured ones.
            """
    )

    @Option(
        help: """
            The test: data (PeerConnectivity messages), raw-tcp (the plain TCP baseline), stream (--streams \
            streams of --bytes, echoed back) or resource (a file of --bytes, --count times, confirmed by SHA-256).
            """
    )
    var test = TestKind.data

    @Option(help: "Measure against the reflector with this display name (default: the first found).")
    var reflector: String?

    @Option(help: "Connect to the reflector's session port at HOST:PORT instead of browsing DNS-SD.")
    var connect: String?

    @Option(help: "The DNS-SD service type reflectors advertise, without _ and ._tcp.")
    var service = "p2p-bench"

    @Option(help: "The reflector's raw echo port for --test raw-tcp (default: what the reflector announces).")
    var rawPort: Int?

    @Option(help: "Measured messages per size (default 1000); --test resource: transfers (default 1).")
    var count: Int?

    @Option(
        help: "Message sizes in bytes, comma-separated, run in this order (1...1048576; --mode unreliable: 1...65000)."
    )
    var size: String?

    @Option(
        help: """
            The data test's send mode: reliable, or unreliable (one UDP datagram per message, at most 65000 bytes; \
            a message whose echo does not come back within --timeout counts as lost).
            """
    )
    var mode = DeliveryMode.reliable

    @Option(help: "The least time between the starts of two sends, in milliseconds (0: as fast as allowed).")
    var delayMs = 0.0

    @Option(help: "The most messages in flight (1: one round trip at a time).")
    var window = 1

    @Option(help: "Unmeasured messages per size before the measured ones (default 100); resource: transfers (0).")
    var warmup: Int?

    @Option(help: "--test stream: streams opened at once, each echoed back.")
    var streams = 1

    @Flag(
        help: """
            --test stream: the reflector reads and checks each stream and answers with a receipt instead of \
            echoing it, so the link carries the streams one way only.
            """
    )
    var oneWay = false

    @Option(
        help: """
            --test stream: bytes written on each stream (default 16777216); --test resource: the file's size \
            (default 67108864).
            """
    )
    var bytes: Int?

    @Option(help: "Seconds a message has to come back before it counts as lost.")
    var timeout = 5.0

    @Option(
        help: """
            The most seconds spent sending one size's messages (warm-up and measured each); stream: the whole \
            test; resource: each transfer and its confirmation.
            """
    )
    var duration = 60.0

    @Option(help: "Encryption of the session: required, optional or none (default: \(EncryptionPreference.default)).")
    var encryption: EncryptionPreference?

    @Option(help: "Seconds each of finding, inviting and hearing from the reflector may take.")
    var connectTimeout = 10.0

    @Option(help: "The run's name, in the document and its file name (default: the host name).")
    var name: String?

    @Option(help: "Where to write the JSON (default: results/<UTC start>-<test>-<name>.json).")
    var output: String?

    @Flag(help: "Keep every message's send and echo times in the document (memory grows with --count).")
    var samples = false

    @Option(help: "json, or mpcf-testbench to also write MPCF-TestBench's layout beside it (implies --samples).")
    var format = OutputFormat.json

    @Flag(help: "Print only the path written and errors.")
    var quiet = false

    func validate() throws {
        if !test.isMessageTest, size != nil {
            throw ValidationError("--size applies to --test data and raw-tcp; --test \(test.rawValue) takes --bytes")
        }
        if test != .stream, streams != 1 { throw ValidationError("--streams applies to --test stream only") }
        guard let sizes = parseSizes(size ?? "64") else {
            throw ValidationError("--size takes sizes in bytes separated by commas, e.g. --size 1,64,1024")
        }
        do {
            try plan(sizes: sizes).validate()
        } catch {
            throw ValidationError(error.message)
        }
        if connect != nil, reflector != nil {
            throw ValidationError("--connect and --reflector exclude each other: connect directly, or browse by name")
        }
        if let connect, parseEndpoint(connect) == nil {
            throw ValidationError("--connect takes HOST:PORT, e.g. --connect 127.0.0.1:7000")
        }
        if let rawPort, !(1...65535).contains(rawPort) { throw ValidationError("--raw-port must be 1...65535") }
        guard connectTimeout > 0, connectTimeout <= 3_600 else {
            throw ValidationError("--connect-timeout must be 0...3600 s")
        }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
    }

    func run() async throws {
        ProcessLimits.raiseOpenFileLimit()
        let sizes = parseSizes(size ?? "64") ?? []
        var target = ReflectorTarget.discover(name: reflector)
        if let connect, let endpoint = parseEndpoint(connect) {
            target = .direct(host: endpoint.host, port: endpoint.port)
        }
        var configuration = RunnerConfiguration(
            plan: plan(sizes: sizes),
            target: target,
            serviceType: service,
            rawPort: rawPort,
            runName: name ?? ProcessInfo.processInfo.hostName,
            connectTimeout: .milliseconds(Int(connectTimeout * 1_000))
        )
        configuration.encryption = encryption ?? .default
        let showsProgress = !quiet && ProgressLine.isTerminal
        let document: BenchmarkDocument
        do {
            document = try await BenchmarkRunner.run(configuration) { progress in
                if showsProgress { ProgressLine.show(progress.line) }
            }
        } catch {
            if showsProgress { ProgressLine.clear() }
            FileHandle.standardError.write(Data("test-runner: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if showsProgress { ProgressLine.clear() }
        if !quiet {
            let connection = document.connection
            print(
                "reflector \(connection.reflectorName ?? "?") (\(connection.method.rawValue)), encryption "
                    + "\(connection.encryption ?? "?"): \(connection.linkSecurity ?? "the link was not reported")"
            )
            print(ComparisonTable.render([document]), terminator: "")
        }
        try write(document)
        let failures = document.failures
        if !failures.isEmpty {
            let lines = failures.prefix(10).map { "  \($0)\n" }.joined()
            let more = failures.count > 10 ? "  (\(failures.count - 10) more in the document)\n" : ""
            FileHandle.standardError.write(Data("test-runner: part of the plan failed:\n\(lines)\(more)".utf8))
            throw ExitCode(1)
        }
    }

    private func plan(sizes: [Int]) -> TestPlan {
        TestPlan(
            test: test,
            mode: mode,
            sizes: test.isMessageTest ? sizes : [],
            count: count ?? (test.isMessageTest ? 1_000 : 1),
            warmup: warmup ?? (test.isMessageTest ? 100 : 0),
            window: window,
            delayMilliseconds: delayMs,
            timeoutSeconds: timeout,
            durationSeconds: duration,
            recordsSamples: samples || format == .mpcfTestbench,
            streams: test == .stream ? streams : nil,
            bytes: test.isMessageTest ? bytes : bytes ?? (test == .stream ? 16 << 20 : 64 << 20),
            oneWay: oneWay ? true : nil
        )
    }

    private func write(_ document: BenchmarkDocument) throws {
        let path = output ?? document.defaultPath()
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try document.encoded().write(to: url)
        print("wrote \(path)")
        if format == .mpcfTestbench {
            let base = path.hasSuffix(".json") ? String(path.dropLast(5)) : path
            let mpcfPath = base + ".mpcf-testbench.json"
            try MPCFTestBenchRecord.encoded(MPCFTestBenchRecord.records(from: document))
                .write(to: URL(fileURLWithPath: mpcfPath))
            print("wrote \(mpcfPath)")
        }
    }
}
