import Foundation
import PeerConnectivity
import PeerConnectivityCore
import Testing

/// Reconnection on real loopback sockets: links cut without goodbye (``Session/abortConnection(to:)``
/// closes the socket as a crash would) come back, and numbered messages sent across the cut arrive
/// exactly once and in order, or are reported.
@Suite("Reconnection", .timeLimit(.minutes(2 * slowdown)))
struct ReconnectionTests {
    /// Reconnection on, with a short backoff. The links are cut by closing their sockets, which both ends see at
    /// once: the liveness timeout and the time one resume attempt may take are long (unless a test is about them), so
    /// that a machine too loaded to answer within the library's 5 s does not cut or resume a link once more.
    static func configuration(
        window: Duration = .seconds(20),
        retainedBytesLimit: Int = 8 << 20,
        liveness: Duration = .seconds(30) * slowdown
    ) -> Session.Configuration {
        var configuration = Session.Configuration.patient
        var reconnection = Session.Reconnection.default
        reconnection.window = window
        reconnection.initialBackoff = .milliseconds(50)
        reconnection.maximumBackoff = .milliseconds(400)
        reconnection.retainedBytesLimit = retainedBytesLimit
        reconnection.attemptTimeout = .seconds(30) * slowdown
        configuration.reconnection = reconnection
        configuration.keepaliveInterval = liveness / 5
        configuration.livenessTimeout = liveness
        return configuration
    }

    /// Message `index`: its number (4 bytes, big-endian) and `padding` bytes.
    static func numbered(_ index: Int, padding: Int = 200) -> Data {
        var data = Data(withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) })
        data.append(Data(repeating: UInt8(truncatingIfNeeded: index), count: padding))
        return data
    }

    /// The numbers of the messages received, in order.
    static func numbers(_ messages: [Data]) -> [Int] {
        messages.map { data in Int(data.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) }
    }

    /// Waits until `log` holds `count` messages (or the time is up) and returns their numbers.
    static func waitForMessages(_ log: EventLog, count: Int, timeout: Duration = waitLimit) async throws -> [Int] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, log.messages.count < count {
            try await Task.sleep(for: .milliseconds(10))
        }
        // A little longer, to catch a duplicate arriving late.
        try await Task.sleep(for: .milliseconds(200))
        return numbers(log.messages)
    }

    @Test(
        "a link cut while messages flow both ways comes back: connecting, then connected; each message once, in order"
    )
    func cutWhileSending() async throws {
        let pair = try await SessionPair.connect(host: Self.configuration(), client: Self.configuration())
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        let count = 3000
        let cutAt = 1000
        let started = ContinuousClock.now
        let sender = Task {
            for index in 0..<count {
                try await client.send(Self.numbered(index), toPeers: [host.peer])
                if index == cutAt { client.abortConnection(to: host.peer) }
            }
        }
        let backSender = Task {
            for index in 0..<count {
                try await host.send(Self.numbered(index, padding: 50), toPeers: [client.peer])
            }
        }
        try await sender.value
        try await backSender.value
        let atHost = try await Self.waitForMessages(pair.hostLog, count: count)
        let atClient = try await Self.waitForMessages(pair.clientLog, count: count)
        let elapsed = ContinuousClock.now - started
        #expect(Self.check(atHost, count: count) == nil, "host: \(pair.hostLog.states(of: client.peer))")
        #expect(Self.check(atClient, count: count) == nil, "client: \(pair.clientLog.states(of: host.peer))")
        for (log, peer) in [(pair.clientLog, host.peer), (pair.hostLog, client.peer)] {
            let states = log.states(of: peer).map(\.0)
            #expect(states == [.connecting, .connected, .connecting, .connected], "\(log.states(of: peer))")
            let dropReason = log.states(of: peer)[2].1
            #expect(dropReason == .connectionLost, "the drop carries its reason: \(String(describing: dropReason))")
        }
        #expect(client.state(of: host.peer) == .connected && host.state(of: client.peer) == .connected)
        print("cutWhileSending: \(count) messages each way across a cut in \(elapsed)")
    }

    @Test(
        "messages sent while the link is down are kept and delivered after it comes back (joinsMesh on and off)",
        arguments: [true, false]
    )
    func sendDuringGap(joinsMesh: Bool) async throws {
        var configuration = Self.configuration()
        configuration.joinsMesh = joinsMesh
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        for index in 0..<10 { try await client.send(Self.numbered(index), toPeers: [host.peer]) }
        _ = try await Self.waitForMessages(pair.hostLog, count: 10)
        // Both ends see the cut at once (a closed socket); the dialling side resumes at once too, so
        // send in the same breath as the cut: some of these go to a peer that is `connecting`.
        client.abortConnection(to: host.peer)
        for index in 10..<200 { try await client.send(Self.numbered(index), toPeers: [host.peer]) }
        let atHost = try await Self.waitForMessages(pair.hostLog, count: 200)
        #expect(Self.check(atHost, count: 200) == nil)
        #expect(pair.clientLog.states(of: host.peer).map(\.0).contains(.connecting))
    }

    @Test(
        "the window ends: notConnected with reconnectionFailed, the unconfirmed messages counted, a waiting send throws"
    )
    func windowExpires() async throws {
        // The window runs from the cut: long enough for the test to see the peer connecting and send twice before it
        // ends, on a machine busy with the suite in parallel.
        let window: Duration = .seconds(10) * slowdown
        let configuration = Self.configuration(window: window, retainedBytesLimit: 10_000)
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        for index in 0..<5 { try await client.send(Self.numbered(index, padding: 100), toPeers: [host.peer]) }
        _ = try await Self.waitForMessages(pair.hostLog, count: 5)
        // The acknowledgements (every 100 ms) are in: 400 ms alone, longer on a loaded machine.
        try await eventually { client.unconfirmedMessageCount(to: host.peer) == 0 }
        // Neither side can be reached again: the link stays down.
        client.closeMemberListener()
        host.closeMemberListener()
        try await Task.sleep(for: .milliseconds(100))
        client.abortConnection(to: host.peer)
        try await pair.clientLog.waitFor(host.peer, .connecting)
        // Kept while the link is down: two of 4 KiB fit in 10,000 bytes; the third waits for room.
        try await client.send(Self.numbered(100, padding: 4000), toPeers: [host.peer])
        try await client.send(Self.numbered(101, padding: 4000), toPeers: [host.peer])
        let started = ContinuousClock.now
        await #expect(throws: SessionError.peerNotConnected(host.peer)) {
            try await client.send(Self.numbered(102, padding: 4000), toPeers: [host.peer])
        }
        // The window's timer wakes it, not a hang: generous, for a loaded machine.
        #expect(ContinuousClock.now - started < window + promptly)
        let reason = try await pair.clientLog.waitFor(host.peer, .notConnected)
        #expect(reason == .some(.reconnectionFailed))
        #expect(reason??.unconfirmedMessages == 2, "the two kept messages are reported: \(String(describing: reason))")
        let hostReason = try await pair.hostLog.waitFor(client.peer, .notConnected)
        #expect(hostReason == .some(.reconnectionFailed))
        #expect(hostReason??.unconfirmedMessages == 0)
        #expect(
            Self.check(Self.numbers(pair.hostLog.messages), count: 5) == nil,
            "nothing doubled, nothing after the cut"
        )
        await #expect(throws: SessionError.peerNotConnected(host.peer)) {
            try await client.send(Self.numbered(103), toPeers: [host.peer])
        }
    }

    @Test("a small retransmit buffer makes send wait for acknowledgements, and nothing is lost or doubled")
    func smallBufferBackpressure() async throws {
        let configuration = Self.configuration(retainedBytesLimit: 16 << 10)
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        for index in 0..<400 {
            try await client.send(Self.numbered(index, padding: 1000), toPeers: [host.peer])
            if index == 200 { client.abortConnection(to: host.peer) }
        }
        let atHost = try await Self.waitForMessages(pair.hostLog, count: 400)
        #expect(Self.check(atHost, count: 400) == nil)
    }

    @Test("a RESUME with a wrong secret is refused (DECLINE 24) and the link stays as it was")
    func wrongSecretRefused() async throws {
        // Plain by name: the raw socket speaks the plain handshake.
        let pair = try await SessionPair.connect(
            host: Self.configuration(),
            client: Self.configuration(),
            encryption: .none
        )
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        try await #require(eventually { host.memberListenerPort != nil })
        let socket = try await RawSocket(port: host.memberListenerPort!)
        socket.send(HandFrames.hello(name: "pair-client", id: client.peer.id))
        let uuid = withUnsafeBytes(of: client.peer.id.uuid) { Array($0) }
        let resume = uuid + [UInt8](repeating: 0x66, count: 16) + HandFrames.bigEndian(UInt64(0))
        socket.send(HandFrames.frame(type: 0x17, body: resume))
        #expect(await socket.readFrame(ofType: 0x04) == [24], "DECLINE, reason 24 (resume refused)")
        try await client.send(Self.numbered(1), toPeers: [host.peer])
        _ = try await Self.waitForMessages(pair.hostLog, count: 1)
        #expect(Self.numbers(pair.hostLog.messages) == [1])
        #expect(host.state(of: client.peer) == .connected)
        #expect(pair.hostLog.states(of: client.peer).map(\.0) == [.connecting, .connected])
    }

    @Test("reconnection off, or on one side only: a cut link is notConnected at once, as before")
    func offKeepsOldBehaviour() async throws {
        for (hostConfiguration, clientConfiguration) in [
            (Session.Configuration.patient, Session.Configuration.patient),
            (Self.configuration(), Session.Configuration.patient),
        ] {
            let pair = try await SessionPair.connect(host: hostConfiguration, client: clientConfiguration)
            defer { pair.acceptor.cancel() }
            try await pair.client.send(Self.numbered(0), toPeers: [pair.host.peer])
            try await pair.host.send(Self.numbered(0), toPeers: [pair.client.peer])
            _ = try await Self.waitForMessages(pair.hostLog, count: 1)
            pair.client.abortConnection(to: pair.host.peer)
            let reason = try await pair.hostLog.waitFor(pair.client.peer, .notConnected)
            #expect(reason == .some(.connectionLost))
            // The client's log is kept by a task of its own, which may record the event after the host's.
            _ = try await pair.clientLog.waitFor(pair.host.peer, .notConnected)
            #expect(pair.hostLog.states(of: pair.client.peer).map(\.0) == [.connecting, .connected, .notConnected])
            #expect(pair.clientLog.states(of: pair.host.peer).map(\.0) == [.connecting, .connected, .notConnected])
        }
    }

    @Test("a goodbye ends the link at once, without reconnecting")
    func goodbyeDoesNotReconnect() async throws {
        let pair = try await SessionPair.connect(host: Self.configuration(), client: Self.configuration())
        defer { pair.acceptor.cancel() }
        await pair.client.disconnect()
        let reason = try await pair.hostLog.waitFor(pair.client.peer, .notConnected)
        #expect(reason == .some(.peerDisconnected))
        #expect(pair.hostLog.states(of: pair.client.peer).map(\.0) == [.connecting, .connected, .notConnected])
    }

    /// Sends `data` once the link to `peer` is up. With a liveness timeout of seconds, a machine loaded enough
    /// (the suite in parallel on two cores) may drop a link before the test means to, and reconnection brings it
    /// back: a send that finds it `connecting` is made again, up to the suite's wait limit. A send that throws
    /// queued nothing, so each message still goes once.
    private static func sendWhenUp(_ data: Data, from session: Session, to peer: PeerID) async throws {
        let deadline = ContinuousClock.now + waitLimit
        while true {
            do {
                try await session.send(data, toPeers: [peer])
                return
            } catch is SessionError where session.state(of: peer) == .connecting && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test("a silent link (nothing arrives, liveness timeout) comes back too", .timeLimit(.minutes(1 * slowdown)))
    func livenessDropResumes() async throws {
        // 3 s: short enough for the test, long enough that a loaded machine rarely drops the link by itself.
        let configuration = Self.configuration(liveness: .seconds(3))
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        try await Self.sendWhenUp(Self.numbered(0), from: client, to: host.peer)
        try await Self.sendWhenUp(Self.numbered(0), from: host, to: client.peer)
        // Both have the other's RESUME-SECRET (the first frame after ACCEPT) once a message went each way.
        _ = try await Self.waitForMessages(pair.hostLog, count: 1)
        _ = try await Self.waitForMessages(pair.clientLog, count: 1)
        // Nothing passes either way on the host's socket any more: both sides hear nothing.
        host.silenceConnection(to: client.peer)
        try #require(try await eventually { pair.clientLog.states(of: host.peer).count >= 3 })
        let (state, reason) = pair.clientLog.states(of: host.peer)[2]
        #expect(
            state == .connecting,
            "\(pair.clientLog.states(of: host.peer)) / \(pair.hostLog.states(of: client.peer))"
        )
        #expect(reason == .livenessTimeout || reason == .connectionLost, "\(String(describing: reason))")
        for index in 1..<50 { try await Self.sendWhenUp(Self.numbered(index), from: client, to: host.peer) }
        let atHost = try await Self.waitForMessages(pair.hostLog, count: 50)
        #expect(Self.check(atHost, count: 50) == nil)
        #expect(try await eventually { client.state(of: host.peer) == .connected })
    }

    @Test("in a mesh of four, a cut link between two members is resumed; the mesh stays whole, messages arrive once")
    func meshLinkResumes() async throws {
        let configuration = Self.configuration()
        let advertiser = try await loopbackAdvertiser("mesh-reconnect")
        let hub = Session(peer: advertiser.peer, configuration: configuration)
        let acceptor = acceptAll(advertiser, into: hub)
        defer { acceptor.cancel() }
        var sessions = [hub]
        var logs = [EventLog(hub)]
        for index in 1..<4 {
            let session = Session(peer: try PeerID(displayName: "member-\(index)"), configuration: configuration)
            logs.append(EventLog(session))
            try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
            sessions.append(session)
        }
        let members = sessions
        let everyone = Set(members.map(\.peer))
        try #require(
            try await eventually { members.allSatisfy { Set($0.connectedPeers) == everyone.subtracting([$0.peer]) } }
        )
        // Two members (linked by the mesh, not by an invitation of theirs) lose their connection.
        let (a, b) = (sessions[1], sessions[2])
        let (logA, logB) = (logs[1], logs[2])
        // How the two met is the mesh's business: on a loaded machine a first introduction's dial was seen to fail
        // and the mesh to dial again (connecting, notConnected, connecting, connected). The cut is judged from
        // where each log stands once both show the other connected.
        try await eventually {
            logA.states(of: b.peer).last?.0 == .connected && logB.states(of: a.peer).last?.0 == .connected
        }
        let (metA, metB) = (logA.states(of: b.peer).count, logB.states(of: a.peer).count)
        for index in 0..<300 {
            try await a.send(Self.numbered(index), toPeers: [b.peer])
            if index == 100 { a.abortConnection(to: b.peer) }
        }
        let atB = try await Self.waitForMessages(logB, count: 300)
        #expect(Self.check(atB, count: 300) == nil)
        try #require(
            try await eventually { members.allSatisfy { Set($0.connectedPeers) == everyone.subtracting([$0.peer]) } }
        )
        // A session shows the peer connected before its event reaches the log's reader: wait for the log too.
        try await eventually {
            logA.states(of: b.peer).count >= metA + 2 && logB.states(of: a.peer).count >= metB + 2
        }
        // The cut: connecting while the link is resumed, then connected; never notConnected.
        let (seenByA, seenByB) = (logA.states(of: b.peer), logB.states(of: a.peer))
        #expect(seenByA.dropFirst(metA).map(\.0) == [.connecting, .connected], "\(seenByA)")
        #expect(seenByB.dropFirst(metB).map(\.0) == [.connecting, .connected], "\(seenByB)")
        for session in sessions { await session.disconnect() }
    }

    @Test("the observable model shows the peer connecting while the link is down, then the failure")
    @MainActor
    func modelShowsConnecting() async throws {
        // The model shows connecting for the whole window: 10 s, so that a main actor held up by other
        // tests running beside this one (and a build beside the suite) still sees it.
        let configuration = Self.configuration(window: .seconds(10) * slowdown)
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        let model = SessionModel(session: client)
        let running = Task { await model.run() }
        defer { running.cancel() }
        try await eventually { model.peers[host.peer]?.state == .connected }
        client.closeMemberListener()
        host.closeMemberListener()
        try await Task.sleep(for: .milliseconds(100))
        let changed = observeChange { _ = model.peers }
        client.abortConnection(to: host.peer)
        try await eventually { model.peers[host.peer]?.state == .connecting }
        #expect(changed.value, "Observation signalled the change")
        #expect(model.peers[host.peer]?.disconnectReason == .connectionLost)
        #expect(!model.connectedPeers.contains(host.peer))
        try await eventually { model.peers[host.peer]?.state == .notConnected }
        #expect(model.peers[host.peer]?.disconnectReason == .reconnectionFailed)
    }

    static func firstMismatch(_ numbers: [Int]) -> Int? {
        numbers.enumerated().first { $0.offset != $0.element }?.offset
    }

    /// Whether `numbers` is 0..<count exactly; else a short description of what differs.
    static func check(_ numbers: [Int], count: Int) -> String? {
        if numbers == Array(0..<count) { return nil }
        let duplicates = numbers.count - Set(numbers).count
        return "\(numbers.count) of \(count) messages, \(duplicates) duplicated, first out of place at "
            + "\(firstMismatch(numbers).map(String.init) ?? "end"), last \(numbers.last.map(String.init) ?? "none")"
    }
}
