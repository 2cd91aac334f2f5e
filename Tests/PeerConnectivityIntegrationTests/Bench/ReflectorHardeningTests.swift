import Foundation
import PeerConnectivity
import PeerConnectivityBench
import PeerConnectivityTesting
import PeerConnectivityTransport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a hostile or careless peer can do to a long-running reflector: the real `reflector` binary on
/// loopback, with peers in this process. The idle timeout is tested on a reflector in this process whose idle check
/// reads a clock the test moves (``ManualIdleClock``).
@Suite("A reflector under a hostile peer", .serialized, .timeLimit(.minutes(2 * slowdown)))
struct ReflectorHardeningTests {
    /// Starts a reflector on 127.0.0.1 without DNS-SD; returns it with its session port.
    private func reflector(
        _ arguments: [String],
        openFileLimit: Int? = nil
    ) async throws -> (ToolProcess, port: Int) {
        let reflector = try ToolProcess(
            "reflector",
            ["--no-dnssd", "--bind", "127.0.0.1", "--port", "0", "--raw-echo-port", "0", "--name", "hardened"]
                + arguments,
            openFileLimit: openFileLimit
        )
        let ready = try #require(try await reflector.line(containing: " ready "))
        return (reflector, try #require(ToolProcess.value("port", in: ready)))
    }

    /// A TCP connection to `port` on loopback that sends nothing; close it with `close`.
    private func silentConnection(to port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return descriptor
    }

    /// How many descriptors `pid` holds once the count stays the same for 300 ms.
    ///
    /// Some are opened beside the ready line rather than before it (timers, signal handling): on a loaded machine a
    /// count taken at once came out short, or the silent connections took the last descriptors before they were.
    private func settledDescriptorCount(of pid: Int32) async throws -> Int {
        var last = -1
        for _ in 0..<(30 * slowdown) {
            let count = try descriptors(of: pid).count
            if count == last { return count }
            last = count
            try await Task.sleep(for: .milliseconds(300))
        }
        return last
    }

    /// The descriptors `pid` holds: each one's number and what it refers to.
    private func descriptors(of pid: Int32) throws -> [(number: Int, target: String)] {
        let folder = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: folder).compactMap { name in
            guard let number = Int(name) else { return nil }
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)")) ?? "?"
            return (number, target)
        }
    }

    /// Whether the peer has closed `descriptor`, a connection that sends nothing (a read finds its end at once).
    private static func isClosedByPeer(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT)) == 0
    }

    /// The descriptor numbers below `limit` that `pid` has free.
    ///
    /// The limit counts numbers below it, not open descriptors: the reflector may inherit some above it from
    /// this process (Foundation's `Process` passes one of its own on), which take none of its numbers.
    private func freeDescriptors(in pid: Int32, limit: Int) throws -> Int {
        limit - (try descriptors(of: pid).filter { $0.number < limit }.count)
    }

    /// Expects a descriptor free in `pid` at one of three looks 100 ms apart.
    private func expectFreeDescriptors(
        in pid: Int32,
        limit: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var free: [Int] = []
        for _ in 0..<3 {
            free.append(try freeDescriptors(in: pid, limit: limit))
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(
            free.contains { $0 >= 1 },
            """
            descriptors free while out of them (reserve \(DescriptorReserve.size)): \(free); limit \(limit), \
            open: \((try? descriptors(of: pid).map { "\($0.number) \($0.target)" }) ?? [])
            """,
            sourceLocation: sourceLocation
        )
    }

    /// A runner of the library's own, connected directly; a failure says what the reflector wrote.
    private func runner(
        _ name: String,
        port: Int,
        of reflector: ToolProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (Session, PeerID) {
        let session = Session(peer: try PeerID(displayName: name))
        do {
            let peer = try await session.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
            return (session, peer)
        } catch {
            let alive = ProcessSample.of(pid: reflector.pid) != nil
            let wrote = "\(reflector.output) \(reflector.errors)"
            Issue.record(
                "\(name) could not connect: \(error); the reflector is \(alive ? "running" : "gone"), it wrote: \(wrote)",
                sourceLocation: sourceLocation
            )
            throw error
        }
    }

    @Test("out of descriptors, the listener waits instead of spinning (under 5% CPU), and serves once they free")
    func descriptorExhaustion() async throws {
        // The reflector's own descriptors, counted on one without a limit; 6 more are taken by the first
        // silent connections, and the rest wait in the backlog, where accept fails with EMFILE.
        let arguments = ["--encryption", "none", "--no-raw-echo", "--udp-ports", "ephemeral"]
        let (unlimited, _) = try await reflector(arguments)
        let own = try await settledDescriptorCount(of: unlimited.pid)
        unlimited.signal(SIGKILL)
        let limit = own + 6
        let (reflector, port) = try await reflector(arguments, openFileLimit: limit)
        defer { withExtendedLifetime(reflector) {} }
        _ = try await settledDescriptorCount(of: reflector.pid)
        // What the first silent connections take: every number below the limit not yet taken (6, and one more for
        // each descriptor it inherited above the limit). Three times as many connections come.
        let room = try freeDescriptors(in: reflector.pid, limit: limit)
        let silent = (0..<(3 * room)).map { _ in silentConnection(to: port) }
        // It runs out and says so (at once alone, later on a loaded machine); from then on it must wait, not spin.
        try await waitFor("the pause to be logged") { reflector.errors.contains("out of file descriptors") }
        // While it waits, descriptors are free: its listener let go of the reserve. Swift's thread pool (libdispatch)
        // traps when it cannot open a file, and did here once at the limit. Silent connections that the handshake
        // timeout closes let the listener take the reserve back and accept the waiting ones, and once one takes the
        // last descriptor it lets go again: at the limit only for an instant, so one of a few looks is enough.
        try await expectFreeDescriptors(in: reflector.pid, limit: limit)
        let before = try #require(
            ProcessSample.of(pid: reflector.pid),
            "the reflector is gone; it wrote: \(reflector.output) \(reflector.errors)"
        )
        let sampled = ContinuousClock.now
        try await Task.sleep(for: .seconds(2))
        guard let after = ProcessSample.of(pid: reflector.pid) else {
            _ = try await reflector.exitStatus(within: .seconds(1))
            let wrote = "\(reflector.output) \(reflector.errors)"
            Issue.record("the reflector is gone (\(reflector.ending)); it wrote: \(wrote)")
            return
        }
        // Per second of the time that passed: on a loaded machine the sleep lasts longer than 2 s.
        let share = (after.cpuSeconds - before.cpuSeconds) / sampled.duration(to: .now).seconds
        #expect(share < 0.05, "the listener used \(Int(share * 100))% of a CPU while out of descriptors")
        // The handshake timeout (5 s) closes the silent connections it accepted, `room` at a time, and it accepts
        // those waiting: after two rounds the last ones take every descriptor but the reserve, with none left
        // waiting whose accept would fail. The connection that takes the last one must pause accepting all the same.
        try await waitFor("two rounds of silent connections closed by the handshake timeout", timeout: .seconds(60)) {
            silent.count { Self.isClosedByPeer($0) } >= 2 * room
        }
        try await Task.sleep(for: .seconds(1))
        try await expectFreeDescriptors(in: reflector.pid, limit: limit)
        for descriptor in silent { close(descriptor) }
        // Once descriptors are free again, a real runner is served.
        let folder = try ScratchDirectory("results").url
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--connect", "127.0.0.1:\(port)", "--encryption", "none", "--size", "64", "--count", "10",
                "--warmup", "1", "--output", folder.appendingPathComponent("served.json").path, "--quiet",
            ]
        )
        #expect(try await run.exitStatus() == 0, "\(run.output) \(run.errors)")
    }

    /// How long a runner may take to connect: the TLS handshake and the invitation on loopback, on a machine busy
    /// with the suite in parallel and a build beside it. Generous: only a connection that fails waits for all of it.
    private static let connectTimeout: Duration = .seconds(30) * slowdown

    /// A reflector in this process on 127.0.0.1, without DNS-SD, whose idle check reads `clock`; started, with
    /// what it logs.
    private func reflectorService(
        clock: ManualIdleClock,
        _ configure: (inout ReflectorConfiguration) -> Void
    ) async throws -> (ReflectorService, ReflectorLog) {
        var configuration = ReflectorConfiguration(
            name: "hardened",
            host: "127.0.0.1",
            port: 0,
            rawEchoPort: nil,
            publishesService: false
        )
        configuration.datagramPorts = nil
        configuration.idleClock = clock
        // The 5 s default, from accept to invitation, ran out before a runner's TLS handshake was through on a machine
        // busy with the suite in parallel.
        configuration.handshakeTimeout = Self.connectTimeout
        configure(&configuration)
        let log = ReflectorLog()
        let reflector = try ReflectorService(configuration: configuration) { log.append($0) }
        try await reflector.start()
        return (reflector, log)
    }

    /// A runner of the library's own, connected to an in-process reflector at `port`.
    private func runner(_ name: String, port: Int) async throws -> (Session, PeerID) {
        let session = Session(peer: try PeerID(displayName: name))
        return (session, try await session.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout))
    }

    @Test("runners that only keep their link alive are dropped after the idle timeout; full means busy, not declined")
    func idleRunnersMakeRoom() async throws {
        // On the idle clock, which stands still while the runners connect: on the wall clock, a loaded machine took
        // longer than the timeout to bring in the three, and the first two were dropped before the third came.
        let clock = ManualIdleClock()
        let (reflector, log) = try await reflectorService(clock: clock) {
            $0.maximumRunners = 2
            $0.idleTimeout = .seconds(6)
        }
        let port = try #require(reflector.port)
        let first = try await runner("idle-1", port: port)
        let second = try await runner("idle-2", port: port)
        // Full: a third is told busy (13), which says to try again, not declined (3).
        let third = Session(peer: try PeerID(displayName: "third"))
        let refusal = await #expect(throws: InvitationError.self) {
            try await third.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout)
        }
        #expect(refusal?.reason == .busy)
        // The two send nothing. A second before the timeout, both are still served.
        try await clock.advance(by: .seconds(5))
        #expect(!log.text.contains("dropping"), "\(log.text)")
        #expect(reflector.runnerCounts.serving == 2)
        // At the timeout, both are dropped, and the third gets in.
        try await clock.advance(by: .seconds(1))
        #expect(log.text.contains("dropping runner=idle-1"), "\(log.text)")
        #expect(log.text.contains("dropping runner=idle-2"), "\(log.text)")
        try await waitFor("the idle runners to be told") {
            first.0.connectedPeers.isEmpty && second.0.connectedPeers.isEmpty
        }
        try await waitFor("the reflector to forget them") { reflector.runnerCounts.serving == 0 }
        let peer = try await third.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout)
        #expect(peer.displayName == "hardened")
        await third.disconnect()
        await reflector.stop()
    }

    @Test("runners from one address are limited; a runner that works is not dropped while it works")
    func perAddressLimit() async throws {
        let clock = ManualIdleClock()
        let (reflector, log) = try await reflectorService(clock: clock) {
            $0.maximumRunnersPerAddress = 1
            $0.idleTimeout = .seconds(1)
        }
        let port = try #require(reflector.port)
        let busy = Session(peer: try PeerID(displayName: "worker"))
        var events = busy.events.makeAsyncIterator()
        let reflectorPeer = try await busy.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout)
        let second = Session(peer: try PeerID(displayName: "second"))
        let refusal = await #expect(throws: InvitationError.self) {
            try await second.connectPeer(host: "127.0.0.1", port: port, timeout: Self.connectTimeout)
        }
        #expect(refusal?.reason == .busy)
        // A message every 300 ms of the idle clock for 2.4 s: past the idle timeout, still served. Its echo says
        // the reflector has seen it before the clock moves on.
        for index in 0..<8 {
            let tick = Data("tick \(index)".utf8)
            try await busy.send(tick, toPeers: [reflectorPeer])
            while let event = await events.next() {
                if case .dataReceived(tick, _, _) = event { break }
            }
            try await clock.advance(by: .milliseconds(300))
        }
        #expect(busy.connectedPeers == [reflectorPeer])
        #expect(!log.text.contains("dropping"), "\(log.text)")
        // Then it stops working: dropped at the timeout.
        try await clock.advance(by: .seconds(1))
        #expect(log.text.contains("dropping runner=worker"), "\(log.text)")
        await busy.disconnect()
        await reflector.stop()
    }

    @Test("names, contexts, stream and resource names with newlines, ESC and NUL reach the log escaped")
    func noForgedLogLines() async throws {
        let (reflector, port) = try await reflector(["--encryption", "none"])
        defer { withExtendedLifetime(reflector) {} }
        let session = Session(peer: try PeerID(displayName: "evil\nforged: name"), encryptionPreference: .none)
        let context =
            Data("ctx\nforged: context\u{1B}[31m\u{0}".utf8) + Data(repeating: UInt8(ascii: "x"), count: 60_000)
        let reflectorPeer = try await session.connectPeer(
            host: "127.0.0.1",
            port: port,
            withContext: context,
            timeout: .seconds(10)
        )
        let stream = try session.startStream(withName: "s\nforged: stream\u{1B}]0;title\u{7}", toPeer: reflectorPeer)
        try await stream.write(Data("bytes".utf8))
        try stream.finish()
        let folder = try ScratchDirectory("results").url
        let file = folder.appendingPathComponent("r")
        try Data("resource".utf8).write(to: file)
        let transfer = try session.sendResource(at: file, withName: "r\r\nforged: resource", toPeer: reflectorPeer)
        try await transfer.wait()
        try await Task.sleep(for: .milliseconds(500))
        await session.disconnect()
        _ = try await reflector.line(containing: "ended runner=")
        let output = reflector.output
        #expect(output.contains("forged: name"), "the name is in the log, escaped")
        #expect(!output.split(separator: "\n").contains { $0.hasPrefix("forged") }, "no line of the peer's choosing")
        #expect(!output.utf8.contains(0x1B) && !output.utf8.contains(0) && !output.utf8.contains(0x07))
        #expect(output.utf8.count < 16_000, "a 60 kB context is not written whole: \(output.utf8.count) bytes")
    }

    @Test("a resource over the reflector's maximum is refused at once; the runner says why and exits 1")
    func refusedResourceFailsTheRun() async throws {
        let (reflector, port) = try await reflector(["--max-resource-bytes", "100000"])
        defer { withExtendedLifetime(reflector) {} }
        let folder = try ScratchDirectory("results").url
        let path = folder.appendingPathComponent("refused.json").path
        let run = try ToolProcess(
            "test-runner",
            [
                "run", "--connect", "127.0.0.1:\(port)", "--test", "resource", "--bytes", "200000", "--count", "1",
                "--output", path,
            ]
        )
        #expect(try await run.exitStatus() == 1, "\(run.output) \(run.errors)")
        let state = ProcessSample.of(pid: reflector.pid) == nil ? "gone" : "running"
        let wrote = "\(reflector.output) \(reflector.errors)"
        #expect(
            run.errors.contains("larger than the receiver accepts"),
            "\(run.errors); the reflector is \(state), it wrote: \(wrote)"
        )
        let document = try BenchmarkDocument(decoding: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(document.resources?.failed == 1)
    }
}

/// The lines an in-process reflector logged.
private final class ReflectorLog: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    /// Every line so far, one per line.
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
