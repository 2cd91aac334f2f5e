import Foundation
import PeerConnectivity
import PeerConnectivityBench
import PeerConnectivityTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a hostile or careless peer can do to a long-running reflector: the real `reflector` binary on
/// loopback, with peers in this process.
@Suite("A reflector under a hostile peer", .serialized, .timeLimit(.minutes(2)))
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
            let count = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
            if count == last { return count }
            last = count
            try await Task.sleep(for: .milliseconds(300))
        }
        return last
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
        let (reflector, port) = try await reflector(arguments, openFileLimit: own + 6)
        defer { withExtendedLifetime(reflector) {} }
        _ = try await settledDescriptorCount(of: reflector.pid)
        let silent = (0..<16).map { _ in silentConnection(to: port) }
        try await Task.sleep(for: .milliseconds(500))
        let before = try #require(
            ProcessSample.of(pid: reflector.pid),
            "the reflector is gone; it wrote: \(reflector.output) \(reflector.errors)"
        )
        try await Task.sleep(for: .seconds(2))
        let after = try #require(ProcessSample.of(pid: reflector.pid))
        let share = (after.cpuSeconds - before.cpuSeconds) / 2
        #expect(share < 0.05, "the listener used \(Int(share * 100))% of a CPU while out of descriptors")
        #expect(reflector.errors.contains("out of file descriptors"), "the pause is logged")
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
        #expect(try await run.exitStatus(within: .seconds(30)) == 0, "\(run.output) \(run.errors)")
    }

    @Test("runners that only keep their link alive are dropped after the idle timeout; full means busy, not declined")
    func idleRunnersMakeRoom() async throws {
        // 6 s idle timeout: the three invitations must all be answered before it ends, and on a loaded
        // machine running the suite in parallel they have taken over 2 s (5 times that under ThreadSanitizer).
        let idle = 6 * slowdown
        let (reflector, port) = try await reflector(["--max-runners", "2", "--idle-timeout", "\(idle)"])
        defer { withExtendedLifetime(reflector) {} }
        let first = try await runner("idle-1", port: port, of: reflector)
        let second = try await runner("idle-2", port: port, of: reflector)
        // Full: a third is told busy (13), which says to try again, not declined (3).
        let third = Session(peer: try PeerID(displayName: "third"))
        let refusal = await #expect(throws: InvitationError.self) {
            try await third.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        }
        #expect(refusal?.reason == .busy)
        // The two send nothing; after the idle timeout (and at most a second more) they are dropped and the third gets in.
        try await Task.sleep(for: .seconds(idle) + .milliseconds(1500) * slowdown)
        #expect(first.0.connectedPeers.isEmpty && second.0.connectedPeers.isEmpty, "idle runners were dropped")
        #expect(reflector.output.contains("dropping runner=idle-1"))
        let peer = try await third.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        #expect(peer.displayName == "hardened")
        await third.disconnect()
    }

    @Test("runners from one address are limited; a runner that works is not dropped while it works")
    func perAddressLimit() async throws {
        let (reflector, port) = try await reflector(["--max-runners-per-address", "1", "--idle-timeout", "1"])
        defer { withExtendedLifetime(reflector) {} }
        let (busy, reflectorPeer) = try await runner("worker", port: port, of: reflector)
        let second = Session(peer: try PeerID(displayName: "second"))
        let refusal = await #expect(throws: InvitationError.self) {
            try await second.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        }
        #expect(refusal?.reason == .busy)
        // Messages every 300 ms for 2.5 s: past the idle timeout, still served.
        for index in 0..<8 {
            try await busy.send(Data("tick \(index)".utf8), toPeers: [reflectorPeer])
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(busy.connectedPeers == [reflectorPeer])
        await busy.disconnect()
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
        #expect(try await run.exitStatus(within: .seconds(60)) == 1, "\(run.output) \(run.errors)")
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
