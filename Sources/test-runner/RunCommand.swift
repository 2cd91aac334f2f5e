import ArgumentParser
import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// `test-runner run`: one plan against one reflector, one JSON document.
struct RunCommand: AsyncParsableCommand {
    /// `-l`'s default: a datagram that fits an Ethernet frame's 1,500 bytes with the IP and UDP headers.
    static let defaultDatagramLength = 1_400
    /// `-b`'s default, as iperf3's for UDP.
    static let defaultBitrate = 1e6

    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a test against a reflector and write its result as JSON.",
        discussion: """
            The reflector is found by DNS-SD (the first one, or --reflector NAME) or reached with --connect \
            HOST[:PORT] (its session port, 7447 by default; the runner then needs no DNS-SD, and a reflector on \
            a host without avahi-daemon runs with --no-dnssd). \
            Tests: bulk measures the link's throughput as iperf3 does (--time, --parallel, --reverse, --bidir); \
            responsiveness its round trips under load, as Crusader and Apple's networkQuality do; \
            data measures round trips of messages (one in flight: latency; --rate: latency under a load, open \
            loop); raw-tcp runs the data plan over raw TCP (the baseline: TLS 1.3 unless --encryption none, as \
            the data test); stream and resource echo and confirm transfers. A document is written even when the \
            run stops early (the reflector left, a cut link, Ctrl-C), with what completed and an "error"; the \
            exit code is then 1, as when any part of the plan failed.
            """
    )

    @Option(
        help: """
            bulk (throughput one way, as iperf3), responsiveness (latency under load: phases idle, download, \
            upload, both, with RPM), data (message round trips), raw-tcp (the data plan over raw TCP: TLS 1.3 \
            unless --encryption none), stream (--streams streams of --bytes, echoed back), resource (a file of \
            --bytes, or --file PATH, --count times, confirmed by SHA-256) or folder (a folder of --files small files, or \
            --folder PATH, --count times, confirmed file by file).
            """
    )
    var test = TestKind.data

    @Option(help: "Measure against the reflector with this display name (default: the first found).")
    var reflector: String?

    @Option(
        name: [.customShort("c"), .long],
        help: "Connect to the reflector at HOST[:PORT] (default port 7447) instead of browsing DNS-SD."
    )
    var connect: String?

    @Option(
        name: [.customShort("p"), .long],
        help: "The reflector's session port, with --connect HOST (as iperf3's -p; the same as --connect HOST:PORT)."
    )
    var port: Int?

    @Flag(
        name: [.customShort("4"), .customLong("ipv4")],
        help: "Reach the reflector over IPv4 only: its IPv6 addresses are not tried (as iperf3's -4)."
    )
    var ipv4 = false

    @Flag(
        name: [.customShort("6"), .customLong("ipv6")],
        help: "Reach the reflector over IPv6 only (as iperf3's -6); the raw-tcp baseline's port listens on IPv4 only."
    )
    var ipv6 = false

    @Option(
        name: [.customShort("B"), .customLong("bind")],
        help: """
            Bind this runner's connections and UDP socket to this local address (as iperf3's -B): which \
            interface a host with several sends from. Its family limits the reflector's addresses tried.
            """
    )
    var bind: String?

    @Option(
        name: [.customShort("C"), .customLong("congestion")],
        help: """
            The TCP congestion control of the run's connections, on this runner and at the reflector (as iperf3's \
            -C; Linux): cubic, bbr, reno, as /proc/sys/net/ipv4/tcp_available_congestion_control lists. The \
            document says which one each side ran.
            """
    )
    var congestion: String?

    @Option(help: "The DNS-SD service type reflectors advertise, without _ and ._tcp.")
    var service = "p2p-bench"

    @Option(help: "The reflector's raw echo port for --test raw-tcp (default: what the reflector announces).")
    var rawPort: Int?

    @Option(help: "Measured messages per size (default 1000); --test resource and folder: transfers (default 1).")
    var count: Int?

    @Option(
        help: """
            Message sizes in bytes, comma-separated, run in this order (1...1048576; --mode unreliable: \
            1...65000; default: 64).
            """
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

    @Option(
        help: "The most messages in flight (default 1: one round trip at a time; with --rate, the rate × --timeout)."
    )
    var window: Int?

    @Option(
        help: """
            Open loop: send this many messages per second whatever comes back, each round trip timed from when its \
            message was due (as wrk2: waiting for the link counts); --window then only bounds what is in flight.
            """
    )
    var rate: Double?

    @Option(
        help:
            "Unmeasured messages per size before the measured ones (default 100); resource, folder: transfers (default 0)."
    )
    var warmup: Int?

    @Option(help: "--test stream: streams opened at once, each echoed back.")
    var streams = 1

    @Option(
        name: [.customShort("P"), .long],
        help: "--test bulk: streams in each direction at once (default 1); responsiveness: load flows (default 8)."
    )
    var parallel: Int?

    @Option(
        help: """
            --test responsiveness: TCP_NOTSENT_LOWAT of the loaded connection, in bytes, so that the runner's own \
            send buffer does not hold the self probes; 4096 at least, less on a slow link (0: the kernel's \
            default). (default: 16384)
            """
    )
    var notSentLowat: Int?

    @Option(
        name: [.customShort("t"), .long],
        help: """
            Seconds the test runs: --test bulk writes this long (default 10); responsiveness runs each phase this \
            long (default 5); data and raw-tcp send each size's messages this long (--count then defaults to no limit).
            """
    )
    var time: Double?

    @Flag(name: [.customShort("R"), .long], help: "--test bulk: the reflector writes, this runner reads.")
    var reverse = false

    @Option(
        name: [.customShort("O"), .long],
        help: """
            --test bulk: the first seconds left out of the totals (slow start), still printed as intervals; \
            responsiveness: the first seconds of each loaded phase whose probes are left out (default 1; a quarter of \
            -t under 4 s).
            """
    )
    var omit: Double?

    @Flag(
        name: [.customShort("u"), .long],
        help: """
            --test bulk: datagrams one way at -b bits a second instead of streams (as iperf3 -u); the same as \
            --mode unreliable.
            """
    )
    var udp = false

    @Option(
        name: [.customShort("b"), .long],
        help: """
            --test bulk -u: the bitrate in bits a second, with K, M or G for 10^3, 10^6, 10^9 (as iperf3's -b). \
            (default: 1M)
            """
    )
    var bitrate: String?

    @Option(
        name: [.customShort("l"), .long],
        help: "--test bulk -u: each datagram's bytes, its 16-byte header included, 16...65000. (default: 1400)"
    )
    var length: Int?

    @Flag(help: "--test bulk: both write at once, each on its own streams.")
    var bidir = false

    @Option(
        name: [.customShort("i"), .long],
        help:
            "Seconds between interval reports, printed and kept in the document (0: none; default: 1 for --test bulk, none else)."
    )
    var interval: Double?

    @Flag(
        help: """
            --test stream: the reflector reads and checks each stream and answers with a receipt instead of \
            echoing it, so the link carries the streams one way only.
            """
    )
    var oneWay = false

    @Option(
        name: [.customShort("n"), .long],
        help: """
            --test stream: bytes written on each stream (default 16777216); --test resource: the file's size \
            (default 67108864).
            """
    )
    var bytes: Int?

    @Option(
        help: ArgumentHelp(
            """
            --test resource: cut the link, as a crash would, once PCT % of each measured file is sent (0 < PCT \
            < 100). This runner's session then has reconnection and asks the reflector for it (a reflector gives \
            it unless run with --no-reconnection); the link is resumed and the transfer goes on, sending only the \
            blocks the reflector does not hold. The document then records interruptedAtBytes, \
            bytesSentAfterResume and resumedBytes.
            """,
            valueName: "PCT"
        )
    )
    var interruptAt: Double?

    @Option(
        help: """
            --test folder: files in the folder made for the run, 1-64 KiB each (sizes from a fixed seed, 100 \
            to a folder, two levels deep; default 1000).
            """
    )
    var files: Int?

    @Option(
        help: ArgumentHelp(
            "--test folder: send this folder instead of one made for the run (its regular files are checked).",
            valueName: "PATH"
        )
    )
    var folder: String?

    @Option(
        help: ArgumentHelp(
            """
            --test resource: send this file instead of one of --bytes made for the run (hashed before the \
            first transfer; the file stays as it is).
            """,
            valueName: "PATH"
        )
    )
    var file: String?

    @Option(
        help: ArgumentHelp(
            """
            --test resource and folder: send RATE small probes a second on the same session while each \
            measured transfer runs, and for a second on the idle session before: the round trip an app's \
            messages see beside a transfer (besideEcho in the document).
            """,
            valueName: "RATE"
        )
    )
    var besideEcho: Double?

    @Option(help: "Seconds a message has to come back before it counts as lost.")
    var timeout = 5.0

    @Option(
        help: """
            The most seconds spent sending one size's messages (warm-up and measured each); stream: the whole \
            test; resource and folder: each transfer and its confirmation.
            """
    )
    var duration = 60.0

    @Option(help: "Encryption of the session: required, optional or none (default: \(EncryptionPreference.default)).")
    var encryption: EncryptionPreference?

    @Option(
        name: [.customShort("w"), .customLong("stream-window")],
        help: """
            The flow-control window of the streams this runner reads (--reverse, --bidir, echoes), in \
            bytes (default: \(RunnerConfiguration.defaultStreamWindow)); the reflector sets its own \
            (reflector --stream-window).
            """
    )
    var streamWindow: Int?

    @Option(help: "Seconds each of finding, inviting and hearing from the reflector may take.")
    var connectTimeout = 10.0

    @Option(help: "The run's name, in the document and its file name (default: the host name).")
    var name: String?

    @Option(help: "Where to write the JSON (default: results/runs/<UTC start>-<test>-<name>.json; none with --json).")
    var output: String?

    @Flag(name: [.customShort("J"), .long], help: "Print the JSON document on standard output and nothing else there.")
    var json = false

    @Flag(
        help: """
            Print one JSON object a line on standard output and nothing else there: {"event":"interval",...} as \
            each interval ends, then {"event":"end","data":DOCUMENT} (as iperf3's --json-stream).
            """
    )
    var jsonStream = false

    @Option(
        name: [.customShort("f"), .customLong("units")],
        help: """
            How rates print: a (the bits-a-second unit that fits, three significant digits), k, m, g \
            (Kbit/s, Mbit/s, Gbit/s) or K, M, G (KB/s, MB/s, GB/s); powers of 1,000.
            """
    )
    var units = RateFormat.automatic

    @Flag(help: "Start every printed line with the time, UTC (ISO 8601, milliseconds).")
    var timestamps = false

    @Option(help: "Write what would be printed (not the JSON) to this file instead.")
    var logfile: String?

    @Flag(help: "Keep every message's send and echo times in the document (memory grows with --count).")
    var samples = false

    @Option(help: "json, or mpcf-testbench to also write MPCF-TestBench's layout beside it (implies --samples).")
    var format = OutputFormat.json

    @Flag(help: "Print only the path written and errors.")
    var quiet = false

    func validate() throws {
        if ipv4 && ipv6 { throw ValidationError("-4 and -6 exclude each other") }
        if let bind {
            guard Self.isIPAddress(bind) else { throw ValidationError("-B takes an IP address, not \"\(bind)\"") }
            if (ipv4 && bind.contains(":")) || (ipv6 && !bind.contains(":")) {
                throw ValidationError("-B \(bind) is not of the family -\(ipv4 ? "4" : "6") asks for")
            }
        }
        if !test.isMessageTest, test != .bulk, size != nil {
            throw ValidationError(
                "--size applies to --test data, raw-tcp and bulk; --test \(test.rawValue) takes --bytes"
            )
        }
        if test != .stream, streams != 1 { throw ValidationError("--streams applies to --test stream only") }
        if test != .bulk, test != .responsiveness, parallel != nil {
            throw ValidationError("--parallel applies to --test bulk and responsiveness only")
        }
        if let notSentLowat {
            guard test == .responsiveness else {
                throw ValidationError("--not-sent-lowat applies to --test responsiveness")
            }
            guard (0...(64 << 20)).contains(notSentLowat) else {
                throw ValidationError("--not-sent-lowat must be 0...67108864 bytes")
            }
        }
        if let congestion { try Self.validateCongestionControl(congestion) }
        if let streamWindow, !ReflectorConfiguration.streamWindowRange.contains(streamWindow) {
            throw ValidationError("--stream-window must be \(ReflectorConfiguration.streamWindowRange) bytes")
        }
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
        if let connect, parseEndpoint(connect, defaultPort: ReflectorConfiguration.defaultPort) == nil {
            throw ValidationError(
                "--connect takes HOST[:PORT], e.g. --connect 192.0.2.7 or --connect [fe80::1%eth0]:7447"
            )
        }
        if let rawPort, !(1...65535).contains(rawPort) { throw ValidationError("--raw-port must be 1...65535") }
        guard connectTimeout > 0, connectTimeout <= 3_600 else {
            throw ValidationError("--connect-timeout must be 0...3600 s")
        }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
        if json, quiet { throw ValidationError("--json and --quiet exclude each other: --json prints only the JSON") }
        if jsonStream, json || quiet {
            throw ValidationError("--json-stream excludes --json and --quiet: it prints only its JSON lines")
        }
        if let bitrate, parseBitrate(bitrate) == nil {
            throw ValidationError("--bitrate takes bits a second, with K, M or G: e.g. -b 20M, -b 1.5G, -b 500K")
        }
        if bitrate != nil || length != nil, !(udp || mode == .unreliable) || test != .bulk {
            throw ValidationError("--bitrate and --length apply to --test bulk -u")
        }
        if udp, test != .bulk {
            throw ValidationError("-u applies to --test bulk; --test data takes --mode unreliable")
        }
        if let port {
            guard (1...65535).contains(port) else { throw ValidationError("--port must be 1...65535") }
            guard let connect, let endpoint = parseEndpoint(connect, defaultPort: port) else {
                throw ValidationError("--port goes with --connect HOST: DNS-SD says which port a reflector listens on")
            }
            guard endpoint.port == port else {
                throw ValidationError("--connect \(connect) names port \(endpoint.port) and --port \(port): say one")
            }
        }
    }

    func run() async throws {
        ProcessLimits.raiseOpenFileLimit()
        let out = try RunOutput(
            mode: json ? .json : jsonStream ? .jsonStream : quiet ? .quiet : .lines,
            logfile: logfile,
            timestamps: timestamps
        )
        let configuration = runnerConfiguration()
        let events = RunEvents(
            connected: { report, host in out.line(Self.firstLine(report, host: host, test: test)) },
            progress: { progress in out.progress(progress.line) },
            interval: { [units] interval in
                for line in interval.lines(format: units) { out.line(line) }
                out.jsonEvent(interval)
            }
        )
        out.line(Self.setOutLine(configuration))
        let runner = Task { try await BenchmarkRunner.run(configuration, events: events) }
        let interrupter = Task {
            let signal = await ShutdownSignal.next()
            guard !Task.isCancelled else { return }
            out.line("\(signal): stopping, and writing what completed")
            runner.cancel()
        }
        var document: BenchmarkDocument
        do {
            document = try await runner.value
        } catch {
            interrupter.cancel()
            throw ValidationError("\(error)")
        }
        interrupter.cancel()
        if runner.isCancelled, document.error != nil {
            document.error = "interrupted (SIGINT or SIGTERM): \(document.error ?? "")"
        }
        out.clearProgress()
        out.summary(document, units: units)
        try write(document, out: out)
        if let error = document.error {
            out.error("test-runner: \(error)")
            throw ExitCode(1)
        }
        let failures = document.failures
        if !failures.isEmpty {
            let lines = failures.prefix(10).map { "  \($0)\n" }.joined()
            let more = failures.count > 10 ? "  (\(failures.count - 10) more in the document)\n" : ""
            out.error("test-runner: part of the plan failed:\n\(lines)\(more)", newline: false)
            throw ExitCode(1)
        }
    }

    /// Whether `text` is an IPv4 or IPv6 address (with a zone, "fe80::1%eth0", for a link-local one).
    static func isIPAddress(_ text: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        let address = String(text.prefix { $0 != "%" })
        return inet_pton(AF_INET, address, &buffer) == 1 || inet_pton(AF_INET6, address, &buffer) == 1
    }

    private func runnerConfiguration() -> RunnerConfiguration {
        let sizes = parseSizes(size ?? "64") ?? []
        var target = ReflectorTarget.discover(name: reflector)
        if let connect, let endpoint = parseEndpoint(connect, defaultPort: port ?? ReflectorConfiguration.defaultPort) {
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
        configuration.streamWindow = streamWindow ?? RunnerConfiguration.defaultStreamWindow
        configuration.dialFamily = ipv4 ? .ipv4 : ipv6 ? .ipv6 : .any
        configuration.localAddress = bind
        configuration.congestionControl = congestion
        if let notSentLowat { configuration.notSentLowWatermark = notSentLowat == 0 ? nil : notSentLowat }
        return configuration
    }

    /// `-C NAME`: a name as the kernel's are, and one this host's kernel offers where it lists them.
    private static func validateCongestionControl(_ name: String) throws {
        guard RunnerInvitation.isCongestionControlName(name) else {
            throw ValidationError("-C takes a congestion control's name: 1 to 15 lowercase letters, digits, _ or -")
        }
        let listed = "/proc/sys/net/ipv4/tcp_available_congestion_control"
        guard let offered = try? String(contentsOfFile: listed, encoding: .utf8) else { return }
        let names = offered.split(whereSeparator: \.isWhitespace).map(String.init)
        guard names.contains(name) else {
            throw ValidationError(
                "-C \(name): this host's kernel offers \(names.joined(separator: ", ")) (\(listed); "
                    + "modprobe tcp_\(name) may add it)"
            )
        }
    }

    private func plan(sizes: [Int]) -> TestPlan {
        let timed = test.isMessageTest && time != nil
        let datagrams = test == .bulk && (udp || mode == .unreliable)
        return TestPlan(
            test: test,
            mode: udp ? .unreliable : mode,
            sizes: datagrams
                ? [length ?? Self.defaultDatagramLength]
                : test.isMessageTest ? sizes : test == .bulk && size != nil ? sizes : [],
            count: count ?? (timed ? 100_000_000 : test.isMessageTest ? 1_000 : 1),
            warmup: warmup ?? (test.isMessageTest ? 100 : 0),
            window: window ?? rate.map { min(TestPlan.maximumWindow, max(16, Int($0 * timeout) + 16)) } ?? 1,
            delayMilliseconds: delayMs,
            timeoutSeconds: timeout,
            durationSeconds: timed ? time ?? duration : duration,
            recordsSamples: samples || format == .mpcfTestbench,
            streams: test == .stream
                ? streams : test == .bulk ? parallel ?? 1 : test == .responsiveness ? parallel ?? 8 : nil,
            bytes: test.isMessageTest || test == .bulk || test == .responsiveness
                ? bytes : test == .folder || file != nil ? bytes : bytes ?? (test == .stream ? 16 << 20 : 64 << 20),
            oneWay: oneWay ? true : nil,
            timeSeconds: test == .bulk ? time ?? 10 : test == .responsiveness ? time ?? 5 : time,
            reverse: reverse ? true : nil,
            bidirectional: bidir ? true : nil,
            // A second of ramp-up by default, a quarter of a phase shorter than 4 s.
            omitSeconds: test == .responsiveness ? omit ?? min(1, (time ?? 5) / 4) : omit,
            bitrate: datagrams ? bitrate.flatMap(parseBitrate) ?? Self.defaultBitrate : nil,
            intervalSeconds: interval == 0 ? nil : interval ?? (test == .bulk || test == .responsiveness ? 1 : nil),
            rate: rate,
            interruptAtPercent: interruptAt,
            files: test == .folder && folder == nil ? files ?? 1_000 : files,
            folderPath: folder,
            filePath: file,
            besideEchoRate: besideEcho
        )
    }

    private func write(_ document: BenchmarkDocument, out: RunOutput) throws {
        let data = try document.encoded()
        out.jsonEvent(document)
        if json {
            try? FileHandle.standardOutput.write(contentsOf: data + Data("\n".utf8))
            guard let output else { return }
            try data.write(to: URL(fileURLWithPath: output))
            return
        }
        let path = output ?? document.defaultPath()
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        out.always("wrote \(path)")
        if format == .mpcfTestbench {
            let base = path.hasSuffix(".json") ? String(path.dropLast(5)) : path
            let mpcfPath = base + ".mpcf-testbench.json"
            try MPCFTestBenchRecord.encoded(MPCFTestBenchRecord.records(from: document))
                .write(to: URL(fileURLWithPath: mpcfPath))
            out.always("wrote \(mpcfPath)")
        }
    }
}
