import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import Testing

/// The DNS-SD wrapper against the real avahi-daemon (started by `Scripts/start-avahi.sh` before the tests).
///
/// Parallel-safe: every test uses its own random service type and name, and advertises and browses on the loopback
/// interface only.
@Suite("DNS-SD against avahi-daemon", .avahiTimeLimit)
struct DNSSDTests {
    /// The environment variable that turns ``daemonUnreachableProbe()`` on in a child process.
    static let probeVariable = "PEERCONNECTIVITY_DNSSD_UNREACHABLE_PROBE"

    /// Whether this process is the child that ``failsAtOnceWhenTheDaemonIsUnreachable()`` starts.
    static let isProbeProcess = ProcessInfo.processInfo.environment[probeVariable] != nil

    @Test("register, browse, avahi-browse, resolve, withdraw", .disabled(if: isProbeProcess), .avahi)
    func registerBrowseResolveAndWithdraw() async throws {
        let service = TestService.unique(namePrefix: "PC test Ünï ☃")
        let clock = ContinuousClock()
        let events = BrowseRecorder()
        let browse = try DNSServiceBrowse.start(type: service.type, interfaceIndex: service.interfaceIndex) {
            events.record($0)
        }
        defer { browse.cancel() }

        let failures = Mutex<[DNSServiceFailure]>([])
        let registerStart = clock.now
        let registration = try await DNSServiceRegistration.register(
            name: service.name,
            type: service.type,
            port: service.port,
            txtRecord: try TXTRecord.encode(service.txt),
            interfaceIndex: service.interfaceIndex,
            timeout: waitLimit,
            onFailure: { failure in failures.withLock { $0.append(failure) } }
        )
        let registerDuration = clock.now - registerStart
        #expect(registration.registeredName == service.name)
        // Milliseconds alone (the timings are printed below); bounds with room for a loaded machine and a daemon busy
        // with the suite's other tests.
        #expect(registerDuration < promptly)

        // (a) Our browse sees the instance.
        let added = try #require(
            await events.first(after: registerStart, within: promptly) { event in
                guard case .added(let instance) = event else { return false }
                return instance.name == service.name
            },
            "browse saw no .added for \(service.name) within \(promptly); events: \(events.all)"
        )
        guard case .added(let instance) = added.event else {
            Issue.record("expected .added, got \(added.event)")
            return
        }
        #expect(instance.type == service.type + ".")
        #expect(instance.domain == "local.")
        #expect(instance.interfaceIndex == service.interfaceIndex)

        // (b) avahi-browse resolves it with our TXT entries.
        let avahiBrowse = try await ChildProcess.run(
            "/usr/bin/timeout",
            arguments: [
                "30", "avahi-browse", "--resolve", "--terminate", "--parsable", "--no-db-lookup", service.type,
            ],
            timeout: .seconds(60)
        )
        let resolvedLines = AvahiBrowseLine.parseResolved(avahiBrowse.output).filter { $0.name == service.name }
        let resolvedLine = try #require(
            resolvedLines.first,
            "avahi-browse printed no resolved line for \(service.name); status \(avahiBrowse.status), output:\n\(avahiBrowse.output)"
        )
        #expect(resolvedLine.port == service.port)
        #expect(Set(resolvedLine.txt) == Set(service.txt.map { "\($0.key)=\($0.value)" }))

        // (c) Resolve gives back our port and TXT record.
        let resolveStart = clock.now
        let resolved = try await DNSServiceResolution.resolve(instance, timeout: promptly)
        let resolveDuration = clock.now - resolveStart
        #expect(resolved.port == service.port)
        #expect(TXTRecord.decode(resolved.txtRecord) == service.txt)
        #expect(resolved.hostTarget.hasSuffix(".local."))
        #expect(resolved.interfaceIndex == service.interfaceIndex)

        // (d) After cancel(), the browse reports the removal.
        let withdrawStart = clock.now
        registration.cancel()
        registration.cancel()
        let removed = await events.first(after: withdrawStart, within: promptly) { event in
            guard case .removed(let instance) = event else { return false }
            return instance.name == service.name
        }
        #expect(removed != nil, "browse saw no .removed for \(service.name) within \(promptly); events: \(events.all)")
        #expect(failures.withLock { $0 } == [])
        #expect(!events.all.contains { if case .failed = $0.event { true } else { false } })

        print(
            "DNSSD timings: register->callback \(Self.milliseconds(registerDuration)) ms, "
                + "register->browse .added \(Self.milliseconds(added.time - registerStart)) ms, "
                + "resolve \(Self.milliseconds(resolveDuration)) ms, "
                + "cancel->browse .removed \(removed.map { Self.milliseconds($0.time - withdrawStart) } ?? -1) ms"
        )
    }

    @Test(
        "a name this host already advertises for the type fails with NameConflict",
        .disabled(if: isProbeProcess),
        .avahi
    )
    func sameNameTwiceOnOneHost() async throws {
        let service = TestService.unique(namePrefix: "PC clash")
        let first = try await service.register()
        defer { first.cancel() }
        // Another port, so the records differ: Avahi accepts an identical second copy without complaint.
        var other = service
        other.port = service.port &+ 1
        let start = ContinuousClock.now
        await #expect {
            _ = try await other.register()
        } throws: { error in
            (error as? DNSServiceFailure)?.code == -65_548  // kDNSServiceErr_NameConflict
        }
        // Reported, not waited out: the register's own timeout (``waitLimit``) is twice this.
        #expect(ContinuousClock.now - start < promptly)
    }

    @Test("resolving an instance that does not exist times out", .disabled(if: isProbeProcess), .avahi)
    func resolveTimesOut() async throws {
        let service = TestService.unique(namePrefix: "PC absent")
        let start = ContinuousClock.now
        await #expect {
            _ = try await DNSServiceResolution.resolve(service.instance, timeout: .milliseconds(300))
        } throws: { error in
            (error as? DNSServiceFailure)?.isTimeout == true
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(300) && elapsed < .milliseconds(300) + promptly, "timed out after \(elapsed)")
    }

    @Test("cancelling the calling task cancels the resolve", .disabled(if: isProbeProcess), .avahi)
    func resolveIsCancelled() async throws {
        let service = TestService.unique(namePrefix: "PC absent")
        let resolve = Task { try await DNSServiceResolution.resolve(service.instance, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let start = ContinuousClock.now
        resolve.cancel()
        await #expect(throws: CancellationError.self) { _ = try await resolve.value }
        #expect(ContinuousClock.now - start < promptly)
    }

    @Test(
        "each resolve deallocates its ref: more resolves than D-Bus allows live connections",
        .disabled(if: isProbeProcess),
        .avahiAlone
    )
    func resolvesDoNotLeakRefs() async throws {
        let service = TestService.unique(namePrefix: "PC many")
        let registration = try await service.register()
        defer { registration.cancel() }
        // D-Bus allows 256 connections per user, and each live DNSServiceRef holds one: leaked refs would fail here.
        for round in 0..<300 {
            let resolved = try await DNSServiceResolution.resolve(service.instance, timeout: promptly)
            #expect(resolved.port == service.port, "round \(round)")
        }
    }

    @Test("registering and browsing fail at once when avahi-daemon is unreachable", .disabled(if: isProbeProcess))
    func failsAtOnceWhenTheDaemonIsUnreachable() async throws {
        // The daemon is shared with tests running in parallel, so it stays up; instead a child process gets a D-Bus
        // system bus address that leads nowhere. The child is this test binary running only `daemonUnreachableProbe`;
        // any executable that prints the same `DNSSD-PROBE` lines would do.
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=/nonexistent/peerconnectivity-dnssd-test/bus"
        environment["AVAHI_COMPAT_NOWARN"] = "1"
        environment[Self.probeVariable] = "1"
        let child = try await ChildProcess.run(
            "/proc/self/exe",
            arguments: ["--testing-library", "swift-testing", "--filter", "daemonUnreachableProbe"],
            environment: environment,
            timeout: .seconds(120)
        )
        let probeLines = child.output.split(separator: "\n").filter { $0.hasPrefix("DNSSD-PROBE ") }
        #expect(child.status == 0, "probe process failed:\n\(child.output)")
        #expect(probeLines.count == 2, "probe output:\n\(child.output)")
        for line in probeLines {
            #expect(line.contains("code=-65537 daemonNotRunning=true"), "\(line)")
            #expect(line.contains("Scripts/start-avahi.sh"), "\(line)")
        }
        print(probeLines.joined(separator: "\n"))
    }

    /// Runs only in the child process of ``failsAtOnceWhenTheDaemonIsUnreachable()``, whose D-Bus address leads
    /// nowhere.
    @Test(.enabled(if: isProbeProcess))
    func daemonUnreachableProbe() async throws {
        let clock = ContinuousClock()
        let service = TestService.unique(namePrefix: "PC unreachable")

        var start = clock.now
        let registerError = await #expect(throws: DNSServiceFailure.self) {
            _ = try await DNSServiceRegistration.register(
                name: service.name,
                type: service.type,
                port: service.port,
                txtRecord: [0],
                timeout: waitLimit,
                onFailure: { _ in }
            )
        }
        Self.reportProbe("register", registerError, after: clock.now - start)

        start = clock.now
        let browseError = #expect(throws: DNSServiceFailure.self) {
            _ = try DNSServiceBrowse.start(type: service.type) { _ in }
        }
        Self.reportProbe("browse", browseError, after: clock.now - start)
    }

    /// Checks one probe result and prints it as a `DNSSD-PROBE` line for the parent process.
    private static func reportProbe(_ operation: String, _ failure: DNSServiceFailure?, after elapsed: Duration) {
        guard let failure else {
            return
        }
        #expect(failure.isDaemonNotRunning)
        #expect(failure.description.contains("Scripts/start-avahi.sh"))
        // At once, not at the register's timeout (``waitLimit``, twice this): room for a loaded machine.
        #expect(elapsed < promptly)
        print(
            "DNSSD-PROBE \(operation): code=\(failure.code) daemonNotRunning=\(failure.isDaemonNotRunning) "
                + "after \(Self.milliseconds(elapsed)) ms: \(failure)"
        )
    }

    /// A duration in whole milliseconds.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// A service with a random type and name, advertised on the loopback interface.
private struct TestService {
    var name: String
    var type: String
    var port: UInt16
    var txt: [String: String]
    var interfaceIndex: UInt32

    /// A service that no other test uses.
    static func unique(namePrefix: String) -> TestService {
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return TestService(
            name: "\(namePrefix) \(token)",
            // Service type labels are at most 15 bytes (RFC 6335): "_pc" and 12 hex digits.
            type: "_pc\(token.prefix(12))._tcp",
            port: UInt16.random(in: 20_000...60_000),
            txt: ["id": token, "v": "1", "note": "grüße"],
            interfaceIndex: if_nametoindex("lo")
        )
    }

    /// The instance as a browse on the loopback interface reports it.
    var instance: DNSServiceInstance {
        DNSServiceInstance(
            name: self.name,
            type: self.type + ".",
            domain: "local.",
            interfaceIndex: self.interfaceIndex
        )
    }

    /// Registers the service.
    func register() async throws -> DNSServiceRegistration {
        try await DNSServiceRegistration.register(
            name: self.name,
            type: self.type,
            port: self.port,
            txtRecord: try TXTRecord.encode(self.txt),
            interfaceIndex: self.interfaceIndex,
            timeout: waitLimit,
            onFailure: { failure in Issue.record("registration failed after success: \(failure)") }
        )
    }
}

/// Collects browse events with the time each arrived.
private final class BrowseRecorder: Sendable {
    /// An event and when it arrived.
    struct Record: Sendable {
        var time: ContinuousClock.Instant
        var event: DNSServiceBrowse.Event
    }

    /// The events so far.
    private let records = Mutex<[Record]>([])

    /// All events so far.
    var all: [Record] {
        self.records.withLock { $0 }
    }

    /// Records an event; the browse handler.
    func record(_ event: DNSServiceBrowse.Event) {
        let record = Record(time: .now, event: event)
        self.records.withLock { $0.append(record) }
    }

    /// Waits for the first event at or after `start` that matches, until `start + timeout`.
    func first(
        after start: ContinuousClock.Instant,
        within timeout: Duration,
        where matches: (DNSServiceBrowse.Event) -> Bool
    ) async -> Record? {
        let deadline = start + timeout
        while true {
            if let found = self.all.first(where: { $0.time >= start && matches($0.event) }) {
                return found.time <= deadline ? found : nil
            }
            guard ContinuousClock.now < deadline else {
                return nil
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A resolved line of `avahi-browse --parsable --resolve`:
/// `=;interface;protocol;name;type;domain;host;address;port;"txt" "txt"`, with names and TXT strings escaped.
private struct AvahiBrowseLine {
    var name: String
    var port: UInt16
    var txt: [String]

    /// The resolved lines in avahi-browse's output.
    static func parseResolved(_ output: String) -> [AvahiBrowseLine] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false)
            guard fields.count == 10, fields[0] == "=", let port = UInt16(fields[8]) else {
                return nil
            }
            return AvahiBrowseLine(name: unescape(fields[3]), port: port, txt: quotedStrings(fields[9]))
        }
    }

    /// Undoes avahi's escaping: `\DDD` is a decimal byte, `\c` is `c`.
    private static func unescape(_ text: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\"), !input.isEmpty else {
                bytes.append(byte)
                continue
            }
            let digits = input.prefix(3)
            if digits.count == 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let value = UInt8(String(decoding: digits, as: UTF8.self))
            {
                bytes.append(value)
                input = input.dropFirst(3)
            } else {
                bytes.append(input.removeFirst())
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The unescaped contents of each `"..."` in a space-separated list.
    private static func quotedStrings(_ text: some StringProtocol) -> [String] {
        var strings: [String] = []
        var current: String?
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            if current == nil {
                if character == "\"" { current = "" }
                continue
            }
            if character == "\\" {
                // Keep the escape for unescape(_:), which also handles \DDD.
                current! += "\\" + String(iterator.next() ?? "\\")
            } else if character == "\"" {
                strings.append(unescape(current!))
                current = nil
            } else {
                current!.append(character)
            }
        }
        return strings
    }
}
