import Foundation
import Logging
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// What each side announces in the handshake (protocol version 3): the largest message it accepts, and
/// its protocol version; over real sockets on loopback.
@Suite("Announced message size and protocol version", .timeLimit(.minutes(1 * slowdown)))
struct MessageSizeTests {
    enum Side: String, CaseIterable, Sendable {
        /// The inviter (the client) accepts less: the invitee learns it from INVITE.
        case inviter
        /// The invitee (the host) accepts less: the inviter learns it from ACCEPT.
        case invitee
    }

    @Test(
        "a message over the peer's limit fails at once naming both sizes; nothing is lost and the link stays up",
        arguments: Side.allCases,
        [false, true]
    )
    func overThePeersLimit(small: Side, reconnection: Bool) async throws {
        var smallConfiguration = Session.Configuration.patient
        smallConfiguration.maximumMessageLength = 100_000
        var largeConfiguration = Session.Configuration.patient
        if reconnection {
            smallConfiguration.reconnection = .default
            largeConfiguration.reconnection = .default
        }
        let pair = try await SessionPair.connect(
            host: small == .invitee ? smallConfiguration : largeConfiguration,
            client: small == .inviter ? smallConfiguration : largeConfiguration
        )
        defer { pair.acceptor.cancel() }
        let (smallSession, largeSession, smallLog) =
            small == .invitee
            ? (pair.host, pair.client, pair.hostLog) : (pair.client, pair.host, pair.clientLog)

        // Over the limit: refused here, with the peer and both sizes.
        let tooLarge = pattern(count: 100_001, seed: 1)
        await #expect(throws: SessionError.messageTooLargeForPeer(smallSession.peer, size: 100_001, limit: 100_000)) {
            try await largeSession.send(tooLarge, toPeers: [smallSession.peer])
        }
        do {
            try await largeSession.send(tooLarge, toPeers: [smallSession.peer])
        } catch let error as SessionError {
            #expect(error.description.contains("100001 bytes") && error.description.contains("100000 bytes"))
        }
        // At the limit: delivered, after nothing else (the refused message never left).
        let fits = pattern(count: 100_000, seed: 2)
        try await largeSession.send(fits, toPeers: [smallSession.peer])
        _ = try await eventually { !smallLog.messages.isEmpty }
        #expect(smallLog.messages == [fits])
        #expect(largeSession.state(of: smallSession.peer) == .connected)
        #expect(smallSession.state(of: largeSession.peer) == .connected)

        // The other way the larger limit holds.
        let larger = pattern(count: 500_000, seed: 3)
        try await smallSession.send(Data(larger.prefix(100_000)), toPeers: [largeSession.peer])
        await #expect(throws: SessionError.messageTooLarge(size: 500_000, limit: 100_000)) {
            try await smallSession.send(larger, toPeers: [largeSession.peer])
        }
        await pair.client.disconnect()
        await pair.advertiser.stop()
    }

    @Test("a peer of another protocol version is refused on both sides, each naming both versions")
    func otherVersionRefusedOnBothSides() async throws {
        let hostLogs = LogCapture()
        let clientLogs = LogCapture()
        // The loopback advertiser's handshake timeout of 30 s: with the 5 s default, the advertiser once gave
        // up waiting for the client's HELLO through the proxy while the suite ran in parallel on two CPUs.
        let advertiser = try await loopbackAdvertiser("host", encryption: .none) {
            $0.logger = hostLogs.logger(label: "host")
        }
        // Each side's HELLO reaches the other saying version 2.
        let proxy = try await HelloRewritingProxy.start(to: advertiser.port!, rewritesHellos: false, helloVersion: 2)
        var clientConfiguration = Session.Configuration.patient
        clientConfiguration.logger = clientLogs.logger(label: "client")
        let client = Session(
            peer: try PeerID(displayName: "client"),
            encryptionPreference: .none,
            configuration: clientConfiguration
        )
        var failure: InvitationError?
        do {
            _ = try await client.connectPeer(host: "127.0.0.1", port: proxy.port, timeout: invitationTimeout)
            Issue.record("a peer of version 2 was connected")
        } catch let error as InvitationError {
            failure = error
        }
        #expect(failure?.reason == .incompatibleVersion)
        let words = "peer speaks protocol version 2, this library speaks \(WireProtocol.version)"
        #expect(failure?.reason?.detail == words, "\(String(describing: failure))")
        // The advertiser logged its refusal with both versions.
        let logged = try await eventually { hostLogs.records.contains { $0.line.contains(words) } }
        #expect(logged, "the advertiser logged: \(hostLogs.records.map(\.line))")
        #expect(clientLogs.records.contains { $0.line.contains(words) }, "\(clientLogs.records.map(\.line))")
        #expect(client.connectedPeers.isEmpty)
        await proxy.stop()
        await advertiser.stop()
    }
}
