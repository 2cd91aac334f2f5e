import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Two processes on loopback, through the real avahi-daemon: this test process and a `peer-demo` child.
@Suite("Two processes on loopback", .serialized, .avahiTimeLimit, .avahi)
struct TwoProcessTests {
    /// The child's handshake timeout: the library's 5 s, from accept to INVITE with the TLS handshake between, ran
    /// out once on a machine busy with the suite in parallel (debug builds, two cores). These tests are about what
    /// crosses, not the handshake's speed; only a handshake that fails waits for all of it.
    static let handshakeRoom = ["--handshake-timeout", "30"]

    /// The messages of the bulk test: mostly small, every tenth 64 KiB, every hundredth 1 MiB.
    static func size(of sequence: Int) -> Int {
        if sequence % 100 == 99 { return 1 << 20 }
        if sequence % 10 == 5 { return 64 << 10 }
        return [1, 7, 64, 200, 1024, 4096][sequence % 6]
    }

    static let messagePattern: [UInt8] = (0..<((1 << 20) + 256)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }

    /// Message `sequence`: its number in the first bytes, then a pattern that depends on it.
    static func message(_ sequence: Int) -> Data {
        let size = size(of: sequence)
        var data = Data(capacity: size)
        withUnsafeBytes(of: UInt32(sequence).bigEndian) { data.append(contentsOf: $0.prefix(size)) }
        let offset = sequence % 251
        data.append(contentsOf: messagePattern[offset..<(offset + max(0, size - 4))])
        return data
    }

    @Test("advertise, found promptly, invite, both connected, 10,000 mixed messages echoed complete and in order")
    func bulkEcho() async throws {
        let service = uniqueServiceType("bulk")
        let child = try DemoProcess(["advertise", "--service", service, "--name", "echo-bulk"] + Self.handshakeRoom)
        try #require(try await child.waitForLine(containing: "ready") != nil)

        let me = try PeerID(displayName: "bulk-tester")
        let session = Session(peer: me)
        let browser = try Browser(peer: me, serviceType: service)
        let browseStart = ContinuousClock.now
        try browser.start()
        let found = try #require(try await waitForFound(browser, named: "echo-bulk", timeout: waitLimit))
        let foundAfter = browseStart.duration(to: .now)
        // About 0.2 s alone (browse and resolve through avahi-daemon), 1.7 s seen on a loaded machine.
        #expect(foundAfter < promptly, "found after \(foundAfter)")

        var events = session.events.makeAsyncIterator()
        try await browser.invitePeer(found, to: session, withContext: Data("bulk".utf8), timeout: invitationTimeout)
        #expect(session.connectedPeers == [found])
        try await child.waitForLine(containing: "state peer=bulk-tester connected")
        #expect(await events.next().map(stateOf) == .connecting)
        #expect(await events.next().map(stateOf) == .connected)

        let count = 10_000
        let sender = Task {
            for sequence in 0..<count {
                try await session.send(Self.message(sequence), toPeers: [found], mode: .reliable)
            }
        }
        var received = 0
        while received < count, let event = await events.next() {
            guard case .dataReceived(let data, let from, _) = event else {
                Issue.record("unexpected event \(event) after \(received) messages")
                break
            }
            #expect(from == found)
            guard data == Self.message(received) else {
                Issue.record("message \(received) differs: \(data.count) bytes, expected \(Self.size(of: received))")
                break
            }
            received += 1
        }
        try await sender.value
        #expect(received == count)
        await session.disconnect()
        try await child.waitForLine(containing: "state peer=bulk-tester notConnected reason=the peer disconnected")
        child.signal(SIGTERM)
        #expect(try await child.waitForExit(timeout: waitLimit) == 0)
        #expect(child.count("notConnected") == 1, "one notConnected per connection: \(child.output)")
    }

    @Test("a declined invitation: connecting, then notConnected with reason declined")
    func decline() async throws {
        let (child, session, log, browser, found) = try await findChild(
            name: "decliner",
            options: ["--answer", "decline"]
        )
        defer { withExtendedLifetime(child) {} }  // the child lives as long as the test

        let error = await #expect(throws: InvitationError.self) {
            try await browser.invitePeer(found, to: session, timeout: invitationTimeout)
        }
        #expect(error?.reason == .declined)
        try await log.waitFor(found, .notConnected)
        #expect(log.states(of: found).map(\.0) == [.connecting, .notConnected])
        #expect(log.states(of: found).last?.1 == .declined)
    }

    @Test("an unanswered invitation times out: notConnected with reason timedOut, after the timeout")
    func timeout() async throws {
        let (child, session, log, browser, found) = try await findChild(
            name: "ignorer",
            options: ["--answer", "ignore"]
        )
        defer { withExtendedLifetime(child) {} }  // the child lives as long as the test

        let start = ContinuousClock.now
        let error = await #expect(throws: InvitationError.self) {
            try await browser.invitePeer(found, to: session, timeout: .milliseconds(800))
        }
        let elapsed = start.duration(to: .now)
        #expect(error?.reason == .timedOut)
        #expect(elapsed >= .milliseconds(790) && elapsed < .milliseconds(800) + promptly, "timed out after \(elapsed)")
        try await log.waitFor(found, .notConnected)
        #expect(log.states(of: found).last?.1 == .timedOut)
    }

    @Test("disconnect by the other side is seen here as peerDisconnected")
    func remoteDisconnect() async throws {
        let (child, session, log, browser, found) = try await findChild(
            name: "leaver",
            options: ["--disconnect-after", "1"]
        )
        defer { withExtendedLifetime(child) {} }  // the child lives as long as the test
        try await browser.invitePeer(found, to: session, timeout: invitationTimeout)
        try await session.send(Data("bye?".utf8), toPeers: [found])
        let reason = try await log.waitFor(found, .notConnected)
        #expect(reason == .some(.peerDisconnected))
        await #expect(throws: SessionError.peerNotConnected(found)) {
            try await session.send(Data("late".utf8), toPeers: [found])
        }
    }

    @Test("a peer killed with SIGKILL is notConnected at once: its socket closes, no need to wait for liveness")
    func killedPeer() async throws {
        // A liveness timeout far above ``promptly``: the close, not the timer, must report it.
        var configuration = Session.Configuration.patient
        configuration.livenessTimeout = .seconds(60) * slowdown
        let (child, _, log, peer) = try await connectToChild(name: "victim", configuration: configuration)
        child.signal(SIGKILL)
        let start = ContinuousClock.now
        let reason = try await log.waitFor(peer, .notConnected)
        #expect(start.duration(to: .now) < promptly)
        #expect(reason == .some(.connectionLost))
    }

    @Test("a peer that stops answering without closing (SIGSTOP) is notConnected by the keepalive timeout")
    func frozenPeer() async throws {
        // 10 s, twice the default: reported neither before it (the default's 5 s, or a close) nor long after.
        let liveness: Duration = .seconds(10)
        var configuration = Session.Configuration.patient
        configuration.keepaliveInterval = .milliseconds(250)
        configuration.livenessTimeout = liveness
        let (child, session, log, peer) = try await connectToChild(name: "frozen", configuration: configuration)
        // The child's echo is the last it sends: the timeout runs from about here.
        try await session.send(Data("last".utf8), toPeers: [peer])
        try #require(try await eventually { log.messages.contains(Data("last".utf8)) })
        child.signal(SIGSTOP)
        defer { child.signal(SIGKILL) }
        let start = ContinuousClock.now
        let reason = try await log.waitFor(peer, .notConnected, timeout: liveness + waitLimit)
        let elapsed = start.duration(to: .now)
        #expect(reason == .some(.livenessTimeout))
        // A timer never fires early; the echo may have reached this test up to 3 s after the child sent it, on a
        // loaded machine. The upper bound only says the timer fired.
        #expect(elapsed >= liveness - .seconds(3) && elapsed <= liveness + promptly, "reported after \(elapsed)")
    }

    @Test("with avahi-daemon unreachable, advertising fails (exit 2) saying how to start it")
    func avahiNotRunning() async throws {
        // How soon it fails is measured around the call itself (DNSSDTests, daemonUnreachableProbe): here the time
        // would be mostly the child's start, seconds on a loaded machine.
        let child = try DemoProcess(
            ["advertise", "--service", "pc-noavahi"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/pc-test-bus"]
        )
        let status = try await child.waitForExit(timeout: waitLimit)
        #expect(status == 2)
        #expect(child.standardError.contains("avahi-daemon is not running"))
        #expect(child.standardError.contains("Scripts/start-avahi.sh"))
    }

    @Test("direct connection to host:port without DNS-SD")
    func directConnection() async throws {
        let child = try DemoProcess(["advertise", "--no-dnssd", "--name", "direct"] + Self.handshakeRoom)
        let ready = try #require(try await child.waitForLine(containing: "ready"))
        let port = try #require(ready.split(separator: "port=").last.flatMap { Int($0) })
        let session = Session(peer: try PeerID(displayName: "dialer"))
        var events = session.events.makeAsyncIterator()
        let peer = try await session.connectPeer(host: "127.0.0.1", port: port, timeout: invitationTimeout)
        #expect(peer.displayName == "direct")
        #expect(session.connectedPeers == [peer])
        try await session.send(Data("ping".utf8), toPeers: [peer])
        while let event = await events.next() {
            if case .dataReceived(let data, _, _) = event {
                #expect(data == Data("ping".utf8))
                break
            }
        }
    }

    @Test("a stream to another process comes back byte for byte (peer-demo echoes streams)")
    func streamEcho() async throws {
        let (child, session, log, peer) = try await directChild(name: "stream-echo")
        let content = pattern(count: 3 << 20, seed: 21)
        let outgoing = try session.startStream(withName: "echo me", toPeer: peer)
        let writer = Task {
            try await outgoing.write(content)
            try outgoing.finish()
        }
        let incoming = try #require(try await log.waitForStreams(1).first)
        #expect(incoming.name == "echo me")
        var received = Data()
        for try await chunk in incoming { received.append(chunk) }
        try await writer.value
        #expect(received == content)
        try await child.waitForLine(containing: "stream done name=echo me")
    }

    @Test("the receiving process killed mid-transfer: the sender's resource fails with connectionClosed at once")
    func receiverKilledMidTransfer() async throws {
        let scratch = try ScratchDirectory("killed-receiver")
        defer { scratch.remove() }
        // A liveness timeout far above ``promptly``: the close, not the timer, must end the transfer.
        var configuration = Session.Configuration.patient
        configuration.livenessTimeout = .seconds(60) * slowdown
        let (child, session, _, peer) = try await directChild(
            name: "doomed-receiver",
            options: ["--resource-directory", scratch.url.appendingPathComponent("received").path],
            configuration: configuration
        )
        let transfer = try session.sendResource(
            at: try await scratch.largeFile(mebibytes: 256),
            withName: "big",
            toPeer: peer
        )
        try await child.waitForLine(containing: "resource started name=big")
        while transfer.progress.completedUnitCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
        child.signal(SIGKILL)
        let start = ContinuousClock.now
        let error = await #expect(throws: TransferError.self) { try await transfer.wait() }
        #expect(error == .connectionClosed(nil, peer: peer, name: "big"))
        #expect(start.duration(to: .now) < promptly, "not at once: the liveness timeout would be later")
        #expect(transfer.progress.completedUnitCount < transfer.progress.totalUnitCount)
        // The child may die before it has created the directory (it does so off the event loop): then it kept nothing.
        let kept = ((try? scratch.contents("received")) ?? []).filter { !$0.hasPrefix(".partial-") }
        #expect(kept.isEmpty, "no file that looks complete: \(kept)")
    }

    /// Starts a `peer-demo advertise --no-dnssd` child and connects to it directly.
    private func directChild(
        name: String,
        options: [String] = [],
        configuration: Session.Configuration = .patient
    ) async throws -> (DemoProcess, Session, EventLog, PeerID) {
        let child = try DemoProcess(["advertise", "--no-dnssd", "--name", name] + Self.handshakeRoom + options)
        let ready = try #require(try await child.waitForLine(containing: "ready"))
        let port = try #require(ready.split(separator: "port=").last.flatMap { Int($0) })
        let session = Session(peer: try PeerID(displayName: "observer"), configuration: configuration)
        let log = EventLog(session)
        let peer = try await session.connectPeer(host: "127.0.0.1", port: port, timeout: invitationTimeout)
        return (child, session, log, peer)
    }

    /// Starts a `peer-demo advertise` child named `name` and finds it with a new browser and session.
    private func findChild(
        name: String,
        options: [String] = [],
        configuration: Session.Configuration = .patient
    ) async throws -> (DemoProcess, Session, EventLog, Browser, PeerID) {
        let service = uniqueServiceType(String(name.prefix(6)))
        let child = try DemoProcess(["advertise", "--service", service, "--name", name] + Self.handshakeRoom + options)
        try #require(try await child.waitForLine(containing: "ready") != nil)
        let session = Session(peer: try PeerID(displayName: "observer"), configuration: configuration)
        let log = EventLog(session)
        let browser = try Browser(peer: session.peer, serviceType: service)
        try browser.start()
        let found = try #require(try await waitForFound(browser, named: name, timeout: waitLimit))
        return (child, session, log, browser, found)
    }

    /// Starts a child, finds it, and connects to it.
    private func connectToChild(
        name: String,
        configuration: Session.Configuration = .patient
    ) async throws -> (DemoProcess, Session, EventLog, PeerID) {
        let (child, session, log, browser, found) = try await findChild(name: name, configuration: configuration)
        try await browser.invitePeer(found, to: session, timeout: invitationTimeout)
        try await log.waitFor(found, .connected)
        return (child, session, log, found)
    }
}

private func stateOf(_ event: SessionEvent) -> PeerState? {
    if case .peerStateChanged(_, let state, _) = event { return state }
    return nil
}
