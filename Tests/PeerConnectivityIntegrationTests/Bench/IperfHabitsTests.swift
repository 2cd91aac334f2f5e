import Foundation
import PeerConnectivityBench
import PeerConnectivityTesting
import Testing

/// iperf3's habits in the real tools, on loopback: bulk throughput for a time, in parallel, reversed or
/// both ways, interval reports, JSON on standard output, a document whatever happens, and no DNS-SD needed.
@Suite("test-runner as iperf3 users expect it", .serialized, .timeLimit(.minutes(3 * slowdown)))
struct IperfHabitsTests {
    /// The interval lines ("[   0.0-   0.5 s] ...") in a run's output.
    static func intervalLines(in output: String) -> Int {
        output.split(separator: "\n").filter {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") && $0.contains(" s] ")
        }
        .count
    }

    /// A reflector on 127.0.0.1 without DNS-SD, plain, on ephemeral ports; with `environment` for the child.
    private func reflector(environment: [String: String] = [:]) async throws -> (ToolProcess, port: Int) {
        let reflector = try ToolProcess(
            "reflector",
            [
                "--no-dnssd", "--bind", "127.0.0.1", "--port", "0", "--raw-echo-port", "0", "--udp-ports", "ephemeral",
                "--encryption", "none", "--name", "habits",
            ],
            environment: environment
        )
        let ready = try #require(try await reflector.line(containing: " ready "))
        return (reflector, try #require(ToolProcess.value("port", in: ready)))
    }

    private func document(at path: String) throws -> BenchmarkDocument {
        try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("bulk: -t 2 -P 2 forward, -R reverse and --bidir, every byte checked, an interval a second, CPU of both ends")
    func bulk() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let folder = try ScratchDirectory("results").url
        for (label, extra) in [("forward", [String]()), ("reverse", ["-R"]), ("bidir", ["--bidir"])] {
            let path = folder.appendingPathComponent("\(label).json").path
            let run = try ToolProcess(
                "test-runner",
                [
                    "run", "--test", "bulk", "-c", "127.0.0.1:\(port)", "-t", "2", "-P", "2", "--encryption", "none",
                    "--output", path,
                ] + extra
            )
            #expect(try await run.exitStatus() == 0, "\(label): \(run.output) \(run.errors)")
            let document = try document(at: path)
            let bulk = try #require(document.bulk, "\(label)")
            #expect(bulk.streamCount == 2 && bulk.timeSeconds == 2)
            let directions = [bulk.forward, bulk.reverse].compactMap { $0 }
            #expect(directions.count == (label == "bidir" ? 2 : 1), "\(label)")
            #expect((bulk.forward != nil) == (label != "reverse"))
            for direction in directions {
                #expect(direction.receivedBytes > 1 << 20, "\(label): \(direction)")
                #expect(
                    direction.corruptedStreams == 0 && direction.failedStreams == 0,
                    "\(label): \(direction.errors)"
                )
                #expect(direction.seconds >= 2 && direction.bytesPerSecond > 0)
            }
            if let forward = bulk.forward {
                #expect(forward.receivedBytes == forward.sentBytes, "every byte written was read and checked")
                // The reflector's own view: each second's bytes, all streams, adding up to what it read.
                let view = try #require(forward.reflectorBytesPerSecond, "\(label)")
                #expect(view.reduce(0, +) == forward.receivedBytes && !view.isEmpty, "\(label): \(view)")
                #expect(run.output.contains("the reflector read, second by second: "), "\(run.output)")
            }
            let intervals = try #require(document.intervals)
            #expect(intervals.count >= 2, "\(label): \(intervals.count) intervals")
            #expect(intervals.allSatisfy { ($0.sentBytes != nil) == (label != "reverse") })
            #if os(Linux)
                // Both ends' kernels on the one connection: the runner's each interval, the reflector's at the end.
                #expect(intervals.allSatisfy { ($0.link?.bytesSent ?? 0) > 0 }, "\(label)")
                let reflectorLink = try #require(document.connection.reflectorLink, "\(label)")
                let read = (bulk.forward?.receivedBytes ?? 0)
                #expect(reflectorLink.bytesReceived >= UInt64(read), "\(label): \(reflectorLink)")
                #expect(run.output.contains("TCP, as the reflector's kernel saw it: "), "\(run.output)")
                // And over the run, a sample a second from its hello: at least two in a run of 2 s and more.
                let timeline = try #require(document.connection.reflectorLinks, "\(label)")
                #expect(timeline.count >= 2, "\(label): \(timeline.map(\.seconds))")
                #expect(zip(timeline.dropFirst(), timeline).allSatisfy { $0.seconds > $1.seconds })
                #expect((timeline.last?.link.bytesSent ?? 0) + (timeline.last?.link.bytesReceived ?? 0) > 1 << 20)
                // Each end's peak memory: a Swift process holds megabytes; under 1 MiB would be a misread field.
                let memory = try #require(document.memory, "\(label)")
                #expect(memory.runnerPeakResidentBytes > 1 << 20 && (memory.reflectorPeakResidentBytes ?? 0) > 1 << 20)
            #endif
            // Each stream's bytes, which sum to the interval's, and a line each and a sum, as iperf3 prints.
            for interval in intervals {
                #expect(interval.streamSentBytes.map { $0.count == 2 && $0.reduce(0, +) == interval.sentBytes } ?? true)
                #expect(
                    interval.streamReceivedBytes.map { $0.count == 2 && $0.reduce(0, +) == interval.receivedBytes }
                        ?? true
                )
                #expect((interval.streamSentBytes ?? interval.streamReceivedBytes) != nil, "\(label): \(interval)")
            }
            #expect(run.output.contains("[  2] [   0.0-") && run.output.contains("[SUM] [   0.0-"), "\(run.output)")
            // The first interval's end is when its timer fired: 1.1 s, or seconds later on a loaded machine.
            #expect(run.output.contains("[   0.0-"), "intervals printed live: \(run.output)")
            let cpu = try #require(document.cpu)
            #expect(cpu.runner.totalSeconds > 0 && (cpu.reflector?.totalSeconds ?? 0) > 0)
            #expect(document.error == nil)
        }
        #expect(reflector.output.contains("wrote bytes="), "the reflector wrote the reverse streams")
    }

    @Test("bulk --size: 1 MiB messages one way for 2 s, counted and checked by the reflector, not echoed")
    func bulkMessages() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("messages.json").path
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "bulk", "--size", "1048576", "-c", "127.0.0.1:\(port)", "-t", "2", "--encryption",
                "none",
                "--output", path,
            ]
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
        let forward = try #require(try document(at: path).bulk?.forward)
        #expect(forward.receivedBytes == forward.sentBytes && forward.sentBytes >= 1 << 20)
        #expect(forward.receivedBytes % (1 << 20) == 0, "whole messages")
        #expect(forward.corruptedStreams == 0 && forward.failedStreams == 0, "\(forward.errors)")
        #expect(!reflector.output.contains("echoed=1"), "nothing was echoed")
    }

    @Test("-J prints the JSON document on standard output and nothing else; --version names the build")
    func json() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let run = try ToolProcess(
            "test-runner",
            ["run", "-c", "127.0.0.1:\(port)", "--count", "20", "--warmup", "2", "--encryption", "none", "-J"]
        )
        #expect(try await run.exitStatus() == 0, "\(run.errors)")
        let document = try BenchmarkDocument(decoding: Data(run.output.utf8))
        #expect(document.results.first?.echoed == 20)
        #expect(document.tool.libraryVersion != nil && document.tool.build == ToolInfo.build)
        #expect(document.connection.localAddress?.hasPrefix("127.0.0.1:") == true)
        #expect(document.connection.remoteAddress == "127.0.0.1:\(port)")
        #expect(document.connection.interface == "lo")
        for tool in ["test-runner", "reflector"] {
            let version = try ToolProcess(tool, ["--version"])
            #expect(try await version.exitStatus() == 0)
            #expect(version.output.hasPrefix("\(tool) \(ToolInfo.version) (PeerConnectivity "), "\(version.output)")
        }
    }

    @Test("--json-stream: an interval a line as it ends, then the document; -p names the port; -f and --timestamps")
    func jsonStream() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let folder = try ScratchDirectory("results").url
        let path = folder.appendingPathComponent("stream.json").path
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "bulk", "-c", "127.0.0.1", "-p", "\(port)", "-t", "2", "-i", "0.5",
                "--encryption", "none", "--json-stream", "--output", path,
            ]
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        let events = try lines.map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "every line of standard output is one JSON object: \(line)"
            )
            #expect(line.hasPrefix(#"{"event":"#), "the event's name comes first")
            return try #require(object["event"] as? String)
        }
        #expect(events.last == "end" && events.dropLast().allSatisfy { $0 == "interval" }, "\(events)")
        #expect(events.count >= 3, "intervals as they ended: \(events)")
        let end = try #require(lines.last?.dropFirst(#"{"event":"end","data":"#.count).dropLast())
        let streamed = try BenchmarkDocument(decoding: Data(end.utf8))
        #expect(streamed == (try document(at: path)), "the document streamed is the one written")
        #expect(streamed.connection.remoteAddress == "127.0.0.1:\(port)")

        let units = folder.appendingPathComponent("units.json").path
        let plain = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "bulk", "-c", "127.0.0.1:\(port)", "-t", "1", "-f", "M", "--timestamps",
                "--encryption", "none", "--output", units,
            ]
        )
        #expect(try await plain.exitStatus() == 0, "\(plain.output) \(plain.errors)")
        let printed = plain.output.split(separator: "\n")
        #expect(printed.contains { $0.contains("bulk sent: ") && $0.contains(" MB/s, ") }, "\(plain.output)")
        let stamp = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z "#)
        #expect(printed.allSatisfy { $0.contains(stamp) }, "every line starts with the time: \(plain.output)")

        let clash = try ToolProcess("test-runner", ["run", "-c", "127.0.0.1:\(port)", "-p", "1", "--output", units])
        #expect(try await clash.exitStatus() != 0)
        #expect(clash.errors.contains("--port"), "\(clash.errors)")
    }

    @Test("-O: the first seconds are left out of the rate and marked in the intervals")
    func omit() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("omit.json").path
        // 0.5 s omitted of 4: the mark's timer has 3.5 s to fire, room for a loaded machine.
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "bulk", "-c", "127.0.0.1:\(port)", "-t", "4", "-O", "0.5", "-i", "0.25",
                "--encryption", "none", "--output", path,
            ]
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
        let document = try document(at: path)
        let forward = try #require(document.bulk?.forward)
        let omittedSeconds = try #require(forward.omittedSeconds, "\(forward)")
        let omittedBytes = try #require(forward.omittedBytes)
        #expect(omittedSeconds >= 0.5 && omittedSeconds < forward.seconds)
        #expect(omittedBytes <= forward.receivedBytes)
        let rate = Double(forward.receivedBytes - omittedBytes) / (forward.seconds - omittedSeconds)
        #expect(abs(forward.bytesPerSecond - rate) <= rate * 1e-9, "the rate is over what followed the mark")
        let intervals = try #require(document.intervals)
        #expect(intervals.first?.omitted == true && intervals.last?.omitted == nil, "\(intervals)")
        #expect(intervals.allSatisfy { ($0.omitted == true) == ($0.startSeconds < 0.5) })
        #expect(run.output.contains("(omitted)") && run.output.contains("omitted from the rate"), "\(run.output)")
    }

    @Test("-u -b 20M: datagrams one way at the rate asked, each counted lost or received by the reflector")
    func datagramsAtABitrate() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("udp.json").path
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--test", "bulk", "-u", "-b", "20M", "-t", "2", "-c", "127.0.0.1:\(port)", "--encryption",
                "none",
                "--output", path,
            ]
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
        let result = try #require(try document(at: path).bulk?.datagrams)
        // The schedule's count is sent even late, so the rate sent is the one asked, whatever the load, save what
        // this host dropped with its socket's buffer full (none on loopback, but counted apart if any).
        let notSent = try #require(result.notSentDatagrams)
        #expect(result.sentDatagrams + notSent == Int(2 * 20e6 / (1_400 * 8)) && result.length == 1_400)
        #expect(abs(result.sentBitsPerSecond - 20e6) <= 20e6 * 0.02 + Double(notSent * 1_400 * 8) / 2, "\(result)")
        #expect(result.receivedDatagrams + result.lostDatagrams == result.sentDatagrams)
        #expect(result.receivedDatagrams > 0 && result.duplicates == 0, "\(result)")
        #expect(run.output.contains("udp sent: ") && run.output.contains("udp received: "), "\(run.output)")
    }

    @Test("-B binds the runner's connections and UDP socket to a local address; -4 and -6 pick the reflector's family")
    func bindAndFamily() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let folder = try ScratchDirectory("results").url
        // 127.0.0.2 is this host's too (all of 127/8 is on the loopback interface), but never the system's choice.
        for (label, extra) in [
            ("data", ["--count", "20", "--warmup", "2"]), ("udp", ["--test", "bulk", "-u", "-b", "2M", "-t", "1"]),
            ("raw", ["--test", "raw-tcp", "--count", "20", "--warmup", "2"]),
        ] {
            let path = folder.appendingPathComponent("\(label).json").path
            let run = try ToolProcess(
                "test-runner",
                ["run", "-c", "127.0.0.1:\(port)", "-4", "-B", "127.0.0.2", "--encryption", "none", "--output", path]
                    + extra
            )
            #expect(try await run.exitStatus() == 0, "\(label): \(run.output) \(run.errors)")
            let document = try document(at: path)
            if label == "raw" {
                #expect(document.results.first?.echoed == 20, "\(label)")
            } else {
                #expect(document.connection.localAddress?.hasPrefix("127.0.0.2:") == true, "\(document.connection)")
            }
            if label == "udp" {
                // The reflector counts datagrams by their session's token: they came, from the address bound.
                let datagrams = try #require(document.bulk?.datagrams)
                #expect(datagrams.receivedDatagrams > 0, "\(datagrams)")
            }
        }
        // The reflector's address is IPv4: -6 finds nothing to dial, and says so.
        let path = folder.appendingPathComponent("ipv6.json").path
        let refused = try ToolProcess(
            "test-runner",
            ["run", "-c", "127.0.0.1:\(port)", "-6", "--encryption", "none", "--count", "5", "--output", path]
        )
        #expect(try await refused.exitStatus() == 1)
        #expect(refused.errors.contains("no IPv6 address among 127.0.0.1"), "\(refused.errors)")
        let contradiction = try ToolProcess("test-runner", ["run", "-c", "127.0.0.1:\(port)", "-6", "-B", "127.0.0.2"])
        #expect(try await contradiction.exitStatus() != 0)
        let said = contradiction.errors
        #expect(said.contains("-B 127.0.0.2 is not of the family -6 asks for"), "\(said)")
    }

    @Test("two runners at once: each document names the other, as the reflector served them together")
    func sharedWith() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let folder = try ScratchDirectory("results").url
        func runner(_ name: String, _ extra: [String]) throws -> ToolProcess {
            let path = folder.appendingPathComponent("\(name).json").path
            return try ToolProcess(
                "test-runner",
                ["run", "-c", "127.0.0.1:\(port)", "--encryption", "none", "--name", name, "--output", path] + extra
            )
        }
        // The first runs 15 s (300 messages at 20 a second), the second starts once the reflector has the first:
        // alone it connects and ends in well under a second, so it is served while the first still is.
        let long = try runner("long", ["--count", "300", "--rate", "20", "--warmup", "0"])
        _ = try #require(try await reflector.line(containing: "connected runner=test-runner-long"))
        let short = try runner("short", ["--count", "20", "--warmup", "0"])
        #expect(try await short.exitStatus() == 0, "\(short.output) \(short.errors)")
        #expect(try await long.exitStatus() == 0, "\(long.output) \(long.errors)")
        let first = try document(at: folder.appendingPathComponent("long.json").path).connection
        let second = try document(at: folder.appendingPathComponent("short.json").path).connection
        #expect(first.sharedWith == ["test-runner-short (127.0.0.1)"] && first.sharedWithCount == 1, "\(first)")
        #expect(second.sharedWith == ["test-runner-long (127.0.0.1)"] && second.sharedWithCount == 1, "\(second)")
        #expect(long.output.contains("The reflector served 1 other runner meanwhile: test-runner-short (127.0.0.1)"))
    }

    @Test("kill -9 of the reflector mid-run: a valid document with the intervals so far, an error, exit 1")
    func reflectorKilled() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("cut.json").path
        let run = try ToolProcess(
            "test-runner",
            ["run", "-c", "127.0.0.1:\(port)", "-t", "20", "-i", "0.5", "--encryption", "none", "--output", path]
        )
        // Two intervals printed, however late their timer fired on a loaded machine.
        try await waitFor("two intervals") { Self.intervalLines(in: run.output) >= 2 }
        reflector.signal(SIGKILL)
        #expect(try await run.exitStatus() == 1, "\(run.output) \(run.errors)")
        let document = try document(at: path)
        #expect(document.error?.contains("left the session") == true, "\(document.error ?? "no error")")
        #expect((document.intervals?.count ?? 0) >= 2, "the completed intervals are kept")
        #expect((document.results.first?.echoed ?? 0) > 0, "the size under way keeps what it counted")
    }

    @Test("Ctrl-C (SIGINT) of the runner: it stops, writes what completed, says interrupted, exits 1")
    func interrupted() async throws {
        let (reflector, port) = try await reflector()
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("stopped.json").path
        let run = try ToolProcess(
            "test-runner",
            ["run", "--test", "bulk", "-c", "127.0.0.1:\(port)", "-t", "30", "--encryption", "none", "--output", path]
        )
        // The first interval, however late its timer fired.
        try await waitFor("the first interval") { Self.intervalLines(in: run.output) >= 1 }
        run.signal(SIGINT)
        #expect(try await run.exitStatus() == 1, "\(run.output) \(run.errors)")
        let document = try document(at: path)
        #expect(document.error?.contains("interrupted") == true, "\(document.error ?? "no error")")
        #expect(document.intervals?.isEmpty == false)
    }

    @Test("--connect needs no DNS-SD on either side: both tools run with avahi out of reach")
    func withoutAvahi() async throws {
        // The compatibility layer reaches avahi-daemon over the system D-Bus: point both at nothing.
        let noBus = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/dbus-socket"]
        let (reflector, port) = try await reflector(environment: noBus)
        defer { withExtendedLifetime(reflector) {} }
        let path = try ScratchDirectory("results").url.appendingPathComponent("direct.json").path
        let run = try ToolProcess(
            "test-runner",
            ["run", "-c", "127.0.0.1:\(port)", "--count", "20", "--encryption", "none", "--output", path],
            environment: noBus
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
        #expect(try document(at: path).results.first?.echoed == 20)
        // And DNS-SD itself fails with a clear error under the same environment.
        let browse = try ToolProcess(
            "test-runner",
            ["run", "--count", "1", "--connect-timeout", "2", "--output", path],
            environment: noBus
        )
        #expect(try await browse.exitStatus() == 1)
        #expect(browse.errors.contains("avahi") || browse.errors.contains("DNS-SD"), "\(browse.errors)")
    }
}
