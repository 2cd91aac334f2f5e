import Foundation
import Testing

@testable import PeerConnectivity

/// Several subscribers to one session's events, and receive backpressure, over loopback sockets.
@Suite("Session events", .timeLimit(.minutes(1 * slowdown)))
struct SessionEventsTests {
    /// Collects `count` messages from a fresh iterator of `session.events`.
    private func collect(_ count: Int, from iterator: Session.Events.Iterator) async -> [Data] {
        var iterator = iterator
        var messages: [Data] = []
        while messages.count < count, let event = await iterator.next() {
            if case .dataReceived(let data, _, _) = event { messages.append(data) }
        }
        return messages
    }

    @Test("every iterator sees every event in order; the first also sees those from before it")
    func subscribers() async throws {
        let advertiser = try await loopbackAdvertiser("events-host")
        let host = Session(peer: advertiser.peer)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        let client = Session(peer: try PeerID(displayName: "events-client"))
        let peer = try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        // Sent before anyone iterates the host's events: kept for the first iterator.
        try await client.send(Data("early".utf8), toPeers: [peer])
        // Wait until the host has it, queued for its first iterator (its 5 bytes are the backlog): a fixed 100 ms
        // was not always enough on a loaded machine, and then the second iterator saw it too.
        try await eventually { host.runtime.events.backlog >= 5 }
        let first = host.events.makeAsyncIterator()
        let second = host.events.makeAsyncIterator()
        let messages = (0..<500).map { Data("message \($0)".utf8) }
        async let firstSaw = collect(501, from: first)
        async let secondSaw = collect(500, from: second)
        for message in messages {
            try await client.send(message, toPeers: [peer])
        }
        #expect(await firstSaw == [Data("early".utf8)] + messages)
        #expect(await secondSaw == messages)
    }

    @Test("reading pauses while any iterator lags by more than receiveBufferLimit; dropping it resumes reading")
    func backpressure() async throws {
        var configuration = Session.Configuration.patient
        configuration.receiveBufferLimit = 1 << 20
        let advertiser = try await loopbackAdvertiser("slow-reader")
        let host = Session(peer: advertiser.peer, configuration: configuration)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        var lagging: Session.Events.Iterator? = host.events.makeAsyncIterator()
        let reader = host.events.makeAsyncIterator()
        _ = lagging
        let client = Session(peer: try PeerID(displayName: "fast-writer"))
        let peer = try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        let sent = Locked(0)
        let writer = Task {
            // 50 MiB: far more than the limit, the sockets, TLS and the outbound queue hold (some 20-25 MiB)
            for _ in 0..<800 {
                try await client.send(Data(count: 64 << 10), toPeers: [peer])
                sent.withLock { $0 += 1 }
            }
        }
        let readTask = Task { await collect(800, from: reader) }
        try await Task.sleep(for: .milliseconds(500))
        let stalledAt = sent.withLock { $0 }
        #expect(stalledAt < 800, "the writer was held back while one iterator read nothing")
        lagging = nil  // the lagging subscriber goes away: its unread bytes no longer count
        try await writer.value
        #expect(await readTask.value.count == 800)
    }
}
