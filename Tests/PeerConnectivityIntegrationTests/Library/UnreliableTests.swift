import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

#if canImport(Glibc)
    import Glibc
#endif

/// Unreliable messages: UDP datagrams beside the connection, over real loopback sockets.
@Suite("Unreliable mode", .timeLimit(.minutes(1 * slowdown)))
struct UnreliableTests {
    private static let probe = Data("probe".utf8)

    /// The messages `log` received, without the probes.
    private func messages(_ log: EventLog) -> [Data] {
        log.messages.filter { $0 != Self.probe }
    }

    /// Waits until both sides know each other's UDP endpoint (one datagram goes through).
    private func waitForDatagrams(_ pair: SessionPair) async throws {
        let deadline = ContinuousClock.now + waitLimit
        while true {
            try await pair.client.send(Self.probe, toPeers: [pair.host.peer], mode: .unreliable)
            if pair.client.runtime.datagrams.statistics.sent > 0 { return }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("the peer's UDP endpoint never became known")
    }

    @Test("unreliable messages travel as UDP datagrams and arrive (on loopback, all of a paced burst)")
    func datagramsArrive() async throws {
        let pair = try await SessionPair.connect()
        try await waitForDatagrams(pair)
        // Paced by the receiver: 20 at a time, the next 20 once these have arrived (or ``waitLimit`` has passed). A burst
        // paced by the clock alone overflowed the receiving socket's buffer on a loaded machine, whose event loop
        // did not read for a while (79 of 200 arrived): the kernel's loss, not the library's.
        for batch in stride(from: 0, to: 200, by: 20) {
            for index in batch..<(batch + 20) {
                try await pair.client.send(Data("datagram \(index)".utf8), toPeers: [pair.host.peer], mode: .unreliable)
            }
            let deadline = ContinuousClock.now + waitLimit
            while messages(pair.hostLog).count < batch + 20, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        let received = messages(pair.hostLog).map { String(decoding: $0, as: UTF8.self) }
        #expect(Set(received) == Set((0..<200).map { "datagram \($0)" }))
        // The public snapshot: what the sender handed to its socket, what the receiver took in, nothing dropped.
        let sender = pair.client.datagramStatistics
        let receiver = pair.host.datagramStatistics
        #expect(sender.sent >= 200 && sender.notSentQueueFull == 0, "\(sender)")
        #expect(receiver.received >= 200 && receiver.rejected == 0 && receiver.droppedUnread == 0, "\(receiver)")
        // The reply goes the other way by UDP too.
        try await pair.host.send(Data("back".utf8), toPeers: [pair.client.peer], mode: .unreliable)
        let backDeadline = ContinuousClock.now + waitLimit
        while !pair.clientLog.messages.contains(Data("back".utf8)), ContinuousClock.now < backDeadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pair.clientLog.messages.contains(Data("back".utf8)))
    }

    @Test("the largest unreliable message arrives whole; one byte more is refused with a clear error")
    func sizeLimit() async throws {
        let pair = try await SessionPair.connect()
        try await waitForDatagrams(pair)
        let largest = pattern(count: 65_000, seed: 9)
        try await pair.client.send(largest, toPeers: [pair.host.peer], mode: .unreliable)
        let deadline = ContinuousClock.now + waitLimit
        while !pair.hostLog.messages.contains(largest), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pair.hostLog.messages.contains(largest))
        await #expect(throws: SessionError.messageTooLarge(size: 65_001, limit: 65_000)) {
            try await pair.client.send(Data(count: 65_001), toPeers: [pair.host.peer], mode: .unreliable)
        }
    }

    @Test("a flood of unreliable messages never queues: sends return at once and excess is dropped, not buffered")
    func floodDoesNotQueue() async throws {
        let pair = try await SessionPair.connect()
        try await waitForDatagrams(pair)
        let start = ContinuousClock.now
        let message = Data(count: 60_000)
        for _ in 0..<2_000 {  // 120 MB offered as fast as the loop goes
            try await pair.client.send(message, toPeers: [pair.host.peer], mode: .unreliable)
        }
        let elapsed = start.duration(to: .now)
        let statistics = pair.client.runtime.datagrams.statistics
        #expect(statistics.sent + statistics.droppedFull >= 2_000)
        // Each send returns as soon as the datagram is handed over or dropped (about a second for all alone): a bound
        // that only says the loop was not held up, with room for a loaded machine.
        #expect(elapsed < waitLimit, "2,000 sends took \(elapsed)")
        // Reliable traffic still flows at once.
        try await pair.client.send(Data("reliable".utf8), toPeers: [pair.host.peer], mode: .reliable)
        let deadline = ContinuousClock.now + waitLimit
        while !pair.hostLog.messages.contains(Data("reliable".utf8)), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(pair.hostLog.messages.contains(Data("reliable".utf8)))
    }

    @Test("datagrams with an unknown token or from another address are dropped")
    func forgedDatagrams() async throws {
        let pair = try await SessionPair.connect()
        try await waitForDatagrams(pair)
        let port = try #require(pair.host.runtime.datagrams.port)
        try await Task.sleep(for: .milliseconds(50))  // the probes have landed
        let before = messages(pair.hostLog).count
        let rejectedBefore = pair.host.runtime.datagrams.statistics.rejected
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        for forged in [[UInt8](repeating: 0xAB, count: 20), [1, 2, 3], []] {
            _ = forged.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
        let deadline = ContinuousClock.now + waitLimit
        while pair.host.runtime.datagrams.statistics.rejected < rejectedBefore + 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pair.host.runtime.datagrams.statistics.rejected == rejectedBefore + 3)
        #expect(messages(pair.hostLog).count == before)
    }

    @Test("both sides probe the path: it opens on the first answer, and the messages go by UDP from then on")
    func pathOpens() async throws {
        let pair = try await SessionPair.connect()
        try await waitForDatagrams(pair)
        // Each side's path opens on the answer to its own probes: the host's may come a moment after the client's.
        let sides = [(pair.client, pair.host.peer), (pair.host, pair.client.peer)]
        try await eventually {
            sides.allSatisfy { session, peer in
                if case .checked(let summary) = session.datagramPath(to: peer) { return summary.verdict == .open }
                return false
            }
        }
        for (session, peer) in sides {
            guard case .checked(let summary) = session.datagramPath(to: peer) else {
                Issue.record("\(session.peer): \(session.datagramPath(to: peer))")
                continue
            }
            #expect(summary.verdict == .open && summary.answers >= 1 && summary.probesSent >= 1)
            #expect(session.runtime.datagrams.statistics.probesSent >= 1)
            #expect(session.runtime.datagrams.statistics.answersSent >= 1)
        }
    }

    @Test("UDP blocked: the path is judged blocked within the window, and unreliable messages go on the connection")
    func blockedPathFallsBack() async throws {
        let client = Session(peer: try PeerID(displayName: "walled"))
        // As behind a firewall that drops every datagram to the client: the host's probes never arrive, the
        // answers to the client's never come back.
        client.runtime.datagrams.dropEveryDatagram()
        let pair = try await SessionPair.connect(clientSession: client)
        for index in 0..<5 {
            try await pair.client.send(Data("early \(index)".utf8), toPeers: [pair.host.peer], mode: .unreliable)
        }
        // The ceiling is 6 s after the first probe; the rest is room for a loaded machine's timers.
        var verdicts: [DatagramPathStateMachine.Summary] = []
        let deadline = ContinuousClock.now + waitLimit
        while ContinuousClock.now < deadline {
            verdicts = [pair.client.datagramPath(to: pair.host.peer), pair.host.datagramPath(to: pair.client.peer)]
                .compactMap { report in
                    if case .checked(let summary) = report, summary.verdict == .blocked { return summary }
                    return nil
                }
            if verdicts.count == 2 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(verdicts.count == 2)
        for summary in verdicts {
            // On the machine's own clock: never before the 2 s floor, never without the floor's 12 probes
            // unless the 6 s ceiling came first.
            #expect(summary.elapsed >= 2_000_000_000 && summary.answers == 0)
            #expect(summary.probesSent >= 12 || summary.elapsed >= 6_000_000_000)
        }
        for index in 0..<5 {
            try await pair.client.send(Data("late \(index)".utf8), toPeers: [pair.host.peer], mode: .unreliable)
        }
        let expected = Set((0..<5).flatMap { ["early \($0)", "late \($0)"] })
        let arrived = try await eventually {
            Set(messages(pair.hostLog).map { String(decoding: $0, as: UTF8.self) }) == expected
        }
        #expect(arrived)
        #expect(pair.client.runtime.datagrams.statistics.sent == 0)
        #expect(pair.client.runtime.datagrams.statistics.sentOnConnection >= 10)
    }

    @Test("unreliable to a peer not connected throws, naming it")
    func notConnected() async throws {
        let session = Session(peer: try PeerID(displayName: "lonely"))
        let stranger = try PeerID(displayName: "stranger")
        await #expect(throws: SessionError.peerNotConnected(stranger)) {
            try await session.send(Data("x".utf8), toPeers: [stranger], mode: .unreliable)
        }
    }
}
