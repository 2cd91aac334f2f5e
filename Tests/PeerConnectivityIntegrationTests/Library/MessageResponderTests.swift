import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// ``MessageResponder``: messages answered, taken or delivered where the session reads them, over real
/// loopback sockets.
@Suite("Message responder", .timeLimit(.minutes(1 * slowdown)))
struct MessageResponderTests {
    /// A responder by each message's first word: "echo" is answered with itself, "drop" is taken, "grow" is
    /// answered with 2 MiB, "wide" with as many bytes as the message's length says; anything else is
    /// delivered. Counts every call.
    private static func responder(calls: Locked<Int>) -> MessageResponder {
        MessageResponder { data, _, _ in
            calls.withLock { $0 += 1 }
            switch String(decoding: data.prefix(4), as: UTF8.self) {
            case "echo": return .reply(data)
            case "drop": return .consumed
            case "grow": return .reply(pattern(count: 2 << 20, seed: 4))
            case "wide": return .reply(Data(repeating: 7, count: 4_000))
            default: return .deliver
            }
        }
    }

    /// Two sessions, the host's with ``responder(calls:)``.
    private static func connect(
        calls: Locked<Int>,
        client: Session.Configuration = .patient
    ) async throws -> SessionPair {
        var host = Session.Configuration.patient
        host.messageResponder = responder(calls: calls)
        return try await SessionPair.connect(host: host, client: client)
    }

    private static func data(of log: EventLog, mode: SendMode? = nil) -> [Data] {
        log.all.compactMap { event in
            guard case .dataReceived(let data, _, let received) = event, mode == nil || received == mode else {
                return nil
            }
            return data
        }
    }

    @Test("replies come back in order; taken messages vanish; the rest reach the events, in order")
    func repliesInOrder() async throws {
        let calls = Locked(0)
        let pair = try await Self.connect(calls: calls)
        var echoes: [Data] = []
        var delivered: [Data] = []
        for index in 0..<300 {
            let word = ["echo", "drop", "note"][index % 3]
            let message = Data("\(word) \(index)".utf8)
            if word == "echo" { echoes.append(message) }
            if word == "note" { delivered.append(message) }
            try await pair.client.send(message, toPeers: [pair.host.peer], mode: .reliable)
        }
        try await waitFor("100 echoes") { Self.data(of: pair.clientLog).count >= 100 }
        try await waitFor("100 delivered") { Self.data(of: pair.hostLog).count >= 100 }
        #expect(Self.data(of: pair.clientLog) == echoes)
        #expect(Self.data(of: pair.hostLog) == delivered)
        #expect(calls.value == 300)
        // The session's own send goes on working beside the replies.
        try await pair.host.send(Data("from host".utf8), toPeers: [pair.client.peer])
        try await waitFor("the host's own message") { Self.data(of: pair.clientLog).count == 101 }
        #expect(Self.data(of: pair.clientLog).last == Data("from host".utf8))
    }

    @Test("messages of one length, copied into the storage the last answered one let go of, stay as they came")
    func answeredMessagesKeepTheirBytes() async throws {
        let kept = Locked<[Data]>([])
        var host = Session.Configuration.patient
        // Keeps every message it answers or takes, and delivers each fifth: no message may change after.
        host.messageResponder = MessageResponder { data, _, _ in
            kept.withLock { $0.append(data) }
            switch data.first {
            case UInt8(ascii: "e"): return .reply(data)
            case UInt8(ascii: "n"): return .deliver
            default: return .consumed
            }
        }
        let pair = try await SessionPair.connect(host: host, client: .patient)
        var sent: [Data] = []
        for index in 0..<200 {
            let kind = index % 5 == 4 ? "n" : index % 2 == 0 ? "e" : "d"
            // 64 bytes each: stored out of line, so each could share the storage of the one before.
            let message = Data((kind + String(format: "%063d", index)).utf8)
            sent.append(message)
            try await pair.client.send(message, toPeers: [pair.host.peer], mode: .reliable)
        }
        let echoes = sent.filter { $0.first == UInt8(ascii: "e") }
        try await waitFor("200 messages offered") { kept.value.count == 200 }
        try await waitFor("the echoes") { Self.data(of: pair.clientLog).count == echoes.count }
        #expect(kept.value == sent)
        #expect(Self.data(of: pair.clientLog) == echoes)
        try await waitFor("the delivered") { Self.data(of: pair.hostLog).count == 40 }
        #expect(Self.data(of: pair.hostLog) == sent.filter { $0.first == UInt8(ascii: "n") })
    }

    @Test("a large message is offered too, and a reply over 1 MiB goes back as a large message")
    func largeMessages() async throws {
        let calls = Locked(0)
        let pair = try await Self.connect(calls: calls)
        var large = Data("echo ".utf8)
        large.append(pattern(count: 3 << 20, seed: 2))
        try await pair.client.send(large, toPeers: [pair.host.peer])
        try await pair.client.send(Data("grow".utf8), toPeers: [pair.host.peer])
        try await waitFor("two large replies") { Self.data(of: pair.clientLog).count >= 2 }
        // Large messages may arrive in either order.
        #expect(Set(Self.data(of: pair.clientLog)) == [large, pattern(count: 2 << 20, seed: 4)])
        #expect(Self.data(of: pair.hostLog).isEmpty)
        #expect(calls.value == 2)
    }

    @Test("an unreliable message is answered unreliably")
    func unreliable() async throws {
        let calls = Locked(0)
        let pair = try await Self.connect(calls: calls)
        // Datagrams may be lost: sent again until one answer came back by UDP, at most a few hundred times.
        let deadline = ContinuousClock.now + waitLimit
        var sent = 0
        while Self.data(of: pair.clientLog, mode: .unreliable).isEmpty, ContinuousClock.now < deadline, sent < 500 {
            try await pair.client.send(Data("echo \(sent)".utf8), toPeers: [pair.host.peer], mode: .unreliable)
            sent += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        let answers = Self.data(of: pair.clientLog, mode: .unreliable).map { String(decoding: $0, as: UTF8.self) }
        #expect(!answers.isEmpty && answers.allSatisfy { $0.hasPrefix("echo ") }, "\(answers)")
        // Counted once the socket took the datagram, which the client may have read before: waited for.
        try await waitFor("the host's count of datagrams sent") { pair.host.datagramStatistics.sent > 0 }
        #expect(Self.data(of: pair.hostLog).isEmpty)
    }

    @Test("a reply larger than the peer accepts is dropped, and the next one still goes")
    func replyTooLargeForPeer() async throws {
        var clientConfiguration = Session.Configuration.patient
        clientConfiguration.maximumMessageLength = 1_000
        let pair = try await Self.connect(calls: Locked(0), client: clientConfiguration)
        try await pair.client.send(Data("wide".utf8), toPeers: [pair.host.peer])
        try await pair.client.send(Data("echo after".utf8), toPeers: [pair.host.peer])
        try await waitFor("the echo after the dropped reply") { !Self.data(of: pair.clientLog).isEmpty }
        #expect(Self.data(of: pair.clientLog) == [Data("echo after".utf8)])
        #expect(pair.client.connectedPeers == [pair.host.peer])
    }

    @Test("a session with reconnection calls no responder: every message reaches the events")
    func reconnectionDelivers() async throws {
        let calls = Locked(0)
        var hostConfiguration = ReconnectionTests.configuration()
        hostConfiguration.messageResponder = Self.responder(calls: calls)
        let pair = try await SessionPair.connect(host: hostConfiguration, client: ReconnectionTests.configuration())
        let messages = ["echo 1", "drop 2", "note 3"].map { Data($0.utf8) }
        for message in messages {
            try await pair.client.send(message, toPeers: [pair.host.peer])
        }
        try await waitFor("three messages delivered") { Self.data(of: pair.hostLog).count >= 3 }
        #expect(Self.data(of: pair.hostLog) == messages)
        #expect(calls.value == 0)
        #expect(Self.data(of: pair.clientLog).isEmpty)
    }
}

#if canImport(Glibc)
    import Glibc

    /// A peer that sends and never reads: the replies it does not take hold up reading, not memory.
    @Suite("Message responder against a peer that reads nothing", .timeLimit(.minutes(1 * slowdown)))
    struct MessageResponderBackpressureTests {
        @Test("replies a peer does not read stop the session reading from it: its writes stall under 64 MiB")
        func unreadRepliesStopReading() async throws {
            var configuration = Session.Configuration.patient
            configuration.messageResponder = MessageResponder { data, _, _ in .reply(data) }
            let joined = try await RawJoinedSession("responder-unread", configuration: configuration)
            defer { Task { await joined.stop() } }
            let fd = joined.socket.fd
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let frame = HandFrames.data([UInt8](repeating: 0x5A, count: 64 << 10))
            let cap = 64 << 20
            // Without the pause, the session reads everything and queues every reply: the writes never
            // stall before the cap. With it, they stall once the socket buffers and the session's queue are
            // full (well under 64 MiB). A stall is a second of no room (a slow machine may stall sooner, which
            // passes too: the failing case is the cap reached).
            let written = await onOwnThread { () -> Int in
                var written = 0
                var offset = 0
                while written < cap {
                    let result = frame[offset...].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                    if result > 0 {
                        written += result
                        offset = (offset + result) % frame.count
                        continue
                    }
                    guard errno == EAGAIN else { break }
                    var waiter = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&waiter, 1, 1_000) == 0 { break }
                }
                return written
            }
            #expect(written < cap, "wrote \(written) bytes of replies the peer never reads")
            #expect(joined.session.connectedPeers.count == 1, "the peer is still connected")
        }
    }
#endif
