import Foundation
import PeerConnectivity
import PeerConnectivityBench
import Testing

/// Connection floods on real loopback sockets: every flood connection is closed by the handshake
/// timeout at the latest, and a real peer still gets in and echoes meanwhile.
/// The time limit has room for the child process of ``thousandConnections()`` to start on a loaded machine.
@Suite("Connection floods against an advertiser", .serialized, .timeLimit(.minutes(3 * slowdown)))
struct ConnectionFloodTests {
    /// The environment variable that turns ``measuredFlood()`` on in a child process.
    static let childVariable = "PEERCONNECTIVITY_FLOOD_CHILD"

    /// Whether this process is the child that ``thousandConnections()`` starts.
    static let isChild = ProcessInfo.processInfo.environment[childVariable] != nil

    @Test(
        "1,000 idle, garbage and dribbling connections from 1,000 addresses: each closed by the timeout, a real peer echoes",
        .disabled(if: isChild)
    )
    func thousandConnections() async throws {
        // Measured in a process of its own (this test binary, running only `measuredFlood`): in the test process,
        // the peak resident memory and the cooperative pool's queue are those of every test running in parallel
        // (300 MiB more at the peak; the real peer's handshake waiting behind their tasks while 64 newer flood
        // connections push it out), and neither says anything about the advertiser.
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        environment["AVAHI_COMPAT_NOWARN"] = "1"
        let child = try await ChildProcess.run(
            "/proc/self/exe",
            arguments: ["--testing-library", "swift-testing", "--filter", "measuredFlood"],
            environment: environment,
            timeout: .seconds(150)
        )
        #expect(child.status == 0, "the flood's measurement failed:\n\(child.output)")
        let report = child.output.split(separator: "\n").filter { $0.hasPrefix("FLOOD ") }
        #expect(report.count == 1, "the child did not measure the flood:\n\(child.output)")
        print(report.joined(separator: "\n"))
    }

    /// Runs only in the child process of ``thousandConnections()``.
    @Test(.enabled(if: isChild))
    func measuredFlood() async throws {
        // The default limits: a 5 s handshake timeout, 64 pending handshakes, 16 per address.
        let echo = try await LoopbackEcho { $0.logger.logLevel = .critical }
        let timeout = Advertiser.Configuration.default.handshakeTimeout
        let before = ProcessSample.current().residentBytes
        ProcessSample.resetPeak()
        // A byte a second: a HELLO takes a dribbler 35 s, so a timeout that each byte put off would hold it open
        // for 35 s and more, far above the bound below.
        let plan = ConnectionFlood.Plan(
            port: echo.port,
            count: 1_000,
            pacing: .milliseconds(1),
            dribbleInterval: .seconds(1),
            watchLimit: .seconds(30)
        )
        let flood = Task { await ConnectionFlood.run(plan) }

        // While the flood opens its connections, a real peer connects and echoes 64-byte messages.
        try await Task.sleep(for: .milliseconds(200))
        let connectTime = try await echo.connect(timeout: promptly)
        var echoes: [UInt64] = []
        for _ in 0..<50 {
            echoes += try await echo.roundTrips(count: 1)
            try await Task.sleep(for: .milliseconds(10))
        }
        let report = await flood.value
        let peak = ProcessSample.current().peakResidentBytes
        await echo.stop()

        // Milliseconds alone; a bound with room for a loaded machine (the whole suite beside this child process).
        #expect(connectTime < promptly, "the real peer took \(connectTime) to connect during the flood")
        #expect(echoes.count == 50)
        #expect(report.opened == 1_000, "\(report.failed) flood connects failed")
        #expect(report.stillOpen == 0, "\(report.stillOpen) flood connections outlived the watch")
        // Counted from the server's HELLO, not the connect (the accept queue of a loaded machine is seconds long);
        // 15 s of room for its timer and this thread's polls to run late there (a flood opened beside two builds
        // took 11.8 s to open and saw a connection live 11.9 s), still well short of the 35 s a dribbler would take.
        let limit = (timeout + .seconds(15)).milliseconds * 1000
        #expect(
            Double(report.serverLifetime.maxNanoseconds) / 1e3 <= limit,
            "a flood connection lived \(report.serverLifetime.maxNanoseconds / 1_000_000) ms"
        )
        // The dribblers: still closed at the timeout, counted from accept.
        let dribble = try #require(report.serverLifetimeByBehaviour["dribble"])
        #expect(Double(dribble.maxNanoseconds) / 1e3 <= limit)
        let growth = peak - before
        #expect(growth < 64 << 20, "peak RSS grew by \(growth >> 20) MiB")
        print(
            "FLOOD connect \(connectTime), opening \(Int(report.openingMilliseconds)) ms, longest flood connection "
                + "\(report.serverLifetime.maxNanoseconds / 1_000_000) ms, peak RSS growth \(growth >> 20) MiB"
        )
    }

    @Test("connections that dribble a byte every 500 ms are still closed at the handshake timeout")
    func dribblers() async throws {
        // The same on the event loop's clock, without a socket: ConnectionHandlerTests.
        let advertiser = try await loopbackAdvertiser("dribbled", encryption: .none) {
            $0.handshakeTimeout = .seconds(1)
            $0.logger.logLevel = .critical
        }
        let plan = ConnectionFlood.Plan(
            port: advertiser.port!,
            count: 5,
            behaviours: [.dribble],
            pacing: .milliseconds(10),
            dribbleInterval: .milliseconds(500),
            watchLimit: waitLimit
        )
        let report = await ConnectionFlood.run(plan)
        await advertiser.stop()
        #expect(report.closedByServer == 5)
        // From the connect, which comes before the accept: a timer never fires early.
        #expect(report.lifetime.p50Nanoseconds >= 900_000_000, "closed after \(report.lifetime.p50Nanoseconds) ns")
        // A timeout that each byte put off would let the HELLO finish (at 17.5 s) and close a second later. From
        // the server's HELLO, with 9 s of room for a loaded machine.
        let limit = UInt64(10_000_000_000)
        #expect(report.serverLifetime.maxNanoseconds < limit, "closed after \(report.serverLifetime.maxNanoseconds) ns")
    }

    @Test("at the per-address cap the oldest connection from that address is closed with GOODBYE overloaded")
    func perAddressEviction() async throws {
        let advertiser = try await loopbackAdvertiser("crowded", encryption: .none) {
            $0.maximumPendingHandshakesPerAddress = 3
            $0.logger.logLevel = .critical
        }
        // Four silent connections from 127.0.0.1, each set up before the next (its HELLO has come: a connection
        // evicted before its HELLO went out is closed without a frame): the first gives way to the fourth.
        var sockets: [RawSocket] = []
        for index in 0..<4 {
            let socket = try await RawSocket(port: advertiser.port!)
            #expect(await socket.readFrame(ofType: 0x01) != nil, "the advertiser's HELLO on connection \(index)")
            sockets.append(socket)
        }
        let first = sockets[0]
        let goodbye = await first.readFrame(ofType: 0x12)
        #expect(goodbye == [21], "expected GOODBYE 21 (overloaded), got \(String(describing: goodbye))")
        #expect(await first.readUntilClosed() != nil)
        // The other three are still pending: one of them completes its handshake.
        sockets[3].send(HandFrames.hello() + HandFrames.invite())
        var invitations = advertiser.invitations.makeAsyncIterator()
        let invitation = try #require(await invitations.next())
        invitation.decline()
        await advertiser.stop()
    }
}
