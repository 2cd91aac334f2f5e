import Foundation
import PeerConnectivity
import Testing

/// Two peers that invite each other at the same moment end with exactly one connection.
@Suite("Simultaneous invitations", .timeLimit(.minutes(1 * slowdown)))
struct TieBreakTests {
    /// A peer with a session and an advertiser on loopback that accepts every invitation into it.
    struct Side {
        let session: Session
        let advertiser: Advertiser
        let log: EventLog
        let acceptor: Task<Void, Never>

        init(_ name: String) async throws {
            advertiser = try await loopbackAdvertiser(name)
            // The connection that replaces the duplicate is still in its handshake when the duplicate closes;
            // on a loaded machine that handshake took more than the defaults' 5 s, and the peer was reported
            // gone before it came. The waits match the advertiser's 30 s handshake timeout.
            var configuration = Session.Configuration.patient
            configuration.handshakeTimeout = .seconds(30)
            configuration.replacementGracePeriod = .seconds(30)
            session = Session(peer: advertiser.peer, configuration: configuration)
            log = EventLog(session)
            acceptor = acceptAll(advertiser, into: session)
        }
    }

    @Test(
        "both invite at once (direct connections): both calls succeed, one connection, each sees the other once connected",
        arguments: 0..<10
    )
    func simultaneous(round: Int) async throws {
        let alice = try await Side("alice")
        let bob = try await Side("bob")
        async let aliceInvites = alice.session.connectPeer(
            host: "127.0.0.1",
            port: bob.advertiser.port!,
            timeout: invitationTimeout
        )
        async let bobInvites = bob.session.connectPeer(
            host: "127.0.0.1",
            port: alice.advertiser.port!,
            timeout: invitationTimeout
        )
        let (foundBob, foundAlice) = try await (aliceInvites, bobInvites)
        #expect(foundBob == bob.session.peer)
        #expect(foundAlice == alice.session.peer)
        try await alice.log.waitFor(bob.session.peer, .connected)
        try await bob.log.waitFor(alice.session.peer, .connected)
        #expect(alice.session.connectedPeers == [bob.session.peer])
        #expect(bob.session.connectedPeers == [alice.session.peer])
        // Exactly one connection: a message each way arrives once, and nobody is told notConnected.
        try await alice.session.send(Data("hi bob".utf8), toPeers: [bob.session.peer])
        try await bob.session.send(Data("hi alice".utf8), toPeers: [alice.session.peer])
        // Each arrives (on a loaded machine it may take seconds), then no second copy follows.
        try await eventually { !bob.log.messages.isEmpty && !alice.log.messages.isEmpty }
        try await Task.sleep(for: .milliseconds(300))
        #expect(bob.log.messages == [Data("hi bob".utf8)])
        #expect(alice.log.messages == [Data("hi alice".utf8)])
        #expect(alice.session.connectedPeers == [bob.session.peer])
        #expect(
            !alice.log.states(of: bob.session.peer).contains { $0.0 == .notConnected },
            "\(alice.log.states(of: bob.session.peer)) alice<bob: \(alice.session.peer.id.uuidString < bob.session.peer.id.uuidString)"
        )
        #expect(!bob.log.states(of: alice.session.peer).contains { $0.0 == .notConnected })
        await alice.session.disconnect()
        await bob.session.disconnect()
    }
}
