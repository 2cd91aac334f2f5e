import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Reliable messages over 1 MiB travel in chunks on a channel of their own (protocol version 3, kind
/// message); over real sockets on loopback.
///
/// The bounds are long: alone, each test takes about a second; in the suite, beside the flood tests' thousands of
/// connections on the same event loops and a build on the same two cores, three 16 MiB messages once took over a
/// minute to cross (all arrived). Only a test that fails waits for all of it.
@Suite("Large messages", .timeLimit(.minutes(5 * slowdown)))
struct LargeMessageTests {
    /// Waits until `log` holds `count` messages and returns them.
    private func messages(_ log: EventLog, count: Int) async throws -> [Data] {
        _ = try await eventually(timeout: .seconds(180) * slowdown) { log.messages.count >= count }
        return log.messages
    }

    /// How many channels peers have open towards `session` (a large message being received is one).
    private func inboundChannels(_ session: Session) -> Int {
        session.runtime.transfers.withLock { $0.count }
    }

    @Test(
        "a 16 MiB message arrives byte for byte, over the receive buffer limit, and reading goes on after it",
        arguments: [false, true]
    )
    func sixteenMebibytes(encrypted: Bool) async throws {
        let pair = try await SessionPair.connect(encryption: encrypted ? .required : .none)
        defer { pair.acceptor.cancel() }
        #expect(pair.host.configuration.maximumMessageLength == 16 << 20)
        #expect(pair.host.configuration.receiveBufferLimit < 16 << 20)
        let large = pattern(count: 16 << 20, seed: 5)
        try await pair.client.send(large, toPeers: [pair.host.peer])
        try await pair.client.send(Data("after".utf8), toPeers: [pair.host.peer])
        let received = try await messages(pair.hostLog, count: 2)
        #expect(received.count == 2)
        #expect(received.first == large, "the 16 MiB message differs")
        #expect(received.last == Data("after".utf8))
        #expect(inboundChannels(pair.host) == 0, "the message's channel is gone")
        // And the other way.
        try await pair.host.send(large, toPeers: [pair.client.peer])
        #expect(try await messages(pair.clientLog, count: 1).first == large)
        await pair.client.disconnect()
        await pair.advertiser.stop()
    }

    @Test("a 64 B message sent while 16 MiB messages are under way is not held up behind them")
    func smallOvertakesLarge() async throws {
        let pair = try await SessionPair.connect(encryption: .none)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        let large = pattern(count: 16 << 20, seed: 6)
        // Three at once: they go one after another (one large message at a time per connection).
        let senders = (0..<3).map { _ in
            Task { try await client.send(large, toPeers: [host.peer]) }
        }
        // The first is on the wire: the host is gathering it.
        #expect(try await eventually { inboundChannels(host) == 1 })
        let small = pattern(count: 64, seed: 7)
        try await client.send(small, toPeers: [host.peer])
        let received = try await messages(pair.hostLog, count: 4)
        for sender in senders { try await sender.value }
        // Behind one batch of chunks at most, never behind 48 MiB of them.
        let position = try #require(received.firstIndex(of: small))
        #expect(position < 3, "the small message waited for all three large ones: \(received.map(\.count))")
        #expect(received.filter { $0 == large }.count == 3)
        await client.disconnect()
        await pair.advertiser.stop()
    }

    @Test("messages of 1 MiB and less keep their order, and large ones theirs, each one whole")
    func order() async throws {
        let pair = try await SessionPair.connect(encryption: .none)
        defer { pair.acceptor.cancel() }
        let sizes = [1 << 20, 10, 1 << 20, 500_000, 64, (1 << 20) + 1, 3 << 20, (1 << 20) + 1, 1 << 20, 1]
        let sent = sizes.enumerated().map { index, size in pattern(count: size, seed: UInt64(index)) }
        for message in sent {
            try await pair.client.send(message, toPeers: [pair.host.peer])
        }
        let received = try await messages(pair.hostLog, count: sent.count)
        let inline = sent.filter { $0.count <= WireProtocol.inlineMessageLimit }
        let large = sent.filter { $0.count > WireProtocol.inlineMessageLimit }
        #expect(received.filter { $0.count <= WireProtocol.inlineMessageLimit } == inline)
        #expect(received.filter { $0.count > WireProtocol.inlineMessageLimit } == large)
        #expect(received.count == sent.count)
        // A message sent before a large one arrives before it.
        #expect(received.prefix(5) == sent.prefix(5))
        await pair.client.disconnect()
        await pair.advertiser.stop()
    }

    @Test("a large message over the peer's limit fails at once; one within it arrives; the link stays up")
    func overThePeersLimit() async throws {
        var small = Session.Configuration.patient
        small.maximumMessageLength = 4 << 20
        let pair = try await SessionPair.connect(host: small, encryption: .none)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        await #expect(throws: SessionError.messageTooLargeForPeer(host.peer, size: (4 << 20) + 1, limit: 4 << 20)) {
            try await client.send(pattern(count: (4 << 20) + 1, seed: 1), toPeers: [host.peer])
        }
        await #expect(throws: SessionError.messageTooLargeForPeer(host.peer, size: 16 << 20, limit: 4 << 20)) {
            try await client.send(pattern(count: 16 << 20, seed: 1), toPeers: [host.peer])
        }
        let fits = pattern(count: 4 << 20, seed: 2)
        try await client.send(fits, toPeers: [host.peer])
        #expect(try await messages(pair.hostLog, count: 1) == [fits])
        #expect(inboundChannels(host) == 0)
        // The host's own limit holds for what it sends.
        await #expect(throws: SessionError.messageTooLarge(size: (4 << 20) + 1, limit: 4 << 20)) {
            try await host.send(pattern(count: (4 << 20) + 1, seed: 3), toPeers: [client.peer])
        }
        #expect(client.state(of: host.peer) == .connected)
        #expect(host.state(of: client.peer) == .connected)
        await client.disconnect()
        await pair.advertiser.stop()
    }

    @Test(
        "with reconnection, a large message whose link drops fails its send and is not resumed; numbered ones are"
    )
    func linkDropsDuringTransfer() async throws {
        let configuration = ReconnectionTests.configuration()
        let pair = try await SessionPair.connect(host: configuration, client: configuration, encryption: .none)
        defer { pair.acceptor.cancel() }
        let (client, host) = (pair.client, pair.host)
        // Sent whole while the link is up.
        let whole = pattern(count: 2 << 20, seed: 9)
        try await client.send(whole, toPeers: [host.peer])
        #expect(try await messages(pair.hostLog, count: 1) == [whole])

        let large = pattern(count: 16 << 20, seed: 10)
        let sender = Task { try await client.send(large, toPeers: [host.peer]) }
        #expect(try await eventually { inboundChannels(host) == 1 })
        client.abortConnection(to: host.peer)
        let failure = await sender.result
        #expect(throws: SessionError.peerNotConnected(host.peer)) { try failure.get() }
        // The link comes back, and carries numbered messages as before, each once; never the large one.
        #expect(
            try await eventually { pair.clientLog.states(of: host.peer).filter { $0.0 == .connected }.count == 2 },
            "\(pair.clientLog.states(of: host.peer))"
        )
        for index in 0..<20 { try await client.send(ReconnectionTests.numbered(index), toPeers: [host.peer]) }
        let received = try await messages(pair.hostLog, count: 21)
        #expect(ReconnectionTests.numbers(Array(received.dropFirst())) == Array(0..<20))
        #expect(!received.contains(large))
        #expect(inboundChannels(host) == 0, "the broken message's channel was dropped")
        // And a large message crosses the resumed link.
        try await client.send(whole, toPeers: [host.peer])
        #expect(try await messages(pair.hostLog, count: 22).last == whole)
        await client.disconnect()
        await pair.advertiser.stop()
    }

    @Test("to several peers at once: each gets the message whole")
    func severalTargets() async throws {
        let pair = try await SessionPair.connect(encryption: .none)
        defer { pair.acceptor.cancel() }
        let third = try await SessionPair.connect(encryption: .none)
        defer { third.acceptor.cancel() }
        // The host of the second pair joins the first pair's client: two targets, two connections.
        try await pair.client.connectPeer(host: "127.0.0.1", port: third.advertiser.port!, timeout: invitationTimeout)
        let large = pattern(count: 3 << 20, seed: 8)
        try await pair.client.send(large, toPeers: [pair.host.peer, third.host.peer])
        #expect(try await messages(pair.hostLog, count: 1) == [large])
        #expect(try await messages(third.hostLog, count: 1) == [large])
        await pair.client.disconnect()
        await third.client.disconnect()
        await pair.advertiser.stop()
        await third.advertiser.stop()
    }
}
