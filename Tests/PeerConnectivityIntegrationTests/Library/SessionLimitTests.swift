import Foundation
import PeerConnectivity
import Testing

/// Session rules over real loopback sockets, without DNS-SD.
@Suite("Session limits and errors", .timeLimit(.minutes(1 * slowdown)))
struct SessionLimitTests {
    /// An advertiser on loopback (no DNS-SD) that accepts invitations into `session`.
    private func host(
        _ name: String,
        session configuration: Session.Configuration = .patient
    ) async throws -> (Advertiser, Session, Task<Void, Never>) {
        let advertiser = try await loopbackAdvertiser(name)
        let session = Session(peer: advertiser.peer, configuration: configuration)
        return (advertiser, session, acceptAll(advertiser, into: session))
    }

    @Test("inviting past maximumPeers throws SessionError.sessionFull; the first peer stays connected")
    func inviterLimit() async throws {
        let (first, _, _) = try await host("first")
        let (second, _, _) = try await host("second")
        var configuration = Session.Configuration.patient
        configuration.maximumPeers = 1
        let session = Session(peer: try PeerID(displayName: "small"), configuration: configuration)
        let peer = try await session.connectPeer(host: "127.0.0.1", port: first.port!, timeout: invitationTimeout)
        await #expect(throws: SessionError.sessionFull(limit: 1)) {
            try await session.connectPeer(host: "127.0.0.1", port: second.port!, timeout: invitationTimeout)
        }
        #expect(session.connectedPeers == [peer])
    }

    @Test("accepting into a full session throws sessionFull and the inviter is told")
    func accepterLimit() async throws {
        var configuration = Session.Configuration.patient
        configuration.maximumPeers = 1
        let (advertiser, hostSession, _) = try await host("full-host", session: configuration)
        let one = Session(peer: try PeerID(displayName: "one"))
        _ = try await one.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        let two = Session(peer: try PeerID(displayName: "two"))
        let error = await #expect(throws: InvitationError.self) {
            try await two.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        }
        #expect(error?.reason == .sessionFull)
        #expect(hostSession.connectedPeers == [one.peer])
    }

    @Test("send to a peer that is not connected names it; too large and empty target lists are refused")
    func sendErrors() async throws {
        let (advertiser, _, _) = try await host("echoless")
        let session = Session(peer: try PeerID(displayName: "sender"))
        let stranger = try PeerID(displayName: "stranger")
        await #expect(throws: SessionError.peerNotConnected(stranger)) {
            try await session.send(Data("x".utf8), toPeers: [stranger])
        }
        let peer = try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        await #expect(throws: SessionError.peerNotConnected(stranger)) {
            try await session.send(Data("x".utf8), toPeers: [peer, stranger])
        }
        let limit = session.configuration.maximumMessageLength
        await #expect(throws: SessionError.messageTooLarge(size: limit + 1, limit: limit)) {
            try await session.send(Data(count: limit + 1), toPeers: [peer])
        }
        await #expect(throws: SessionError.noPeers) {
            try await session.send(Data("x".utf8), toPeers: [])
        }
        await #expect(throws: SessionError.alreadyInSession(peer)) {
            try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        }
    }

    @Test("disconnect: both sides see notConnected with the right reasons, and the session can be reused")
    func disconnectBothSides() async throws {
        let (advertiser, hostSession, _) = try await host("host")
        let hostLog = EventLog(hostSession)
        let session = Session(peer: try PeerID(displayName: "guest"))
        let log = EventLog(session)
        let peer = try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await hostLog.waitFor(session.peer, .connected)
        await session.disconnect()
        #expect(try await log.waitFor(peer, .notConnected) == .some(.localDisconnect))
        #expect(try await hostLog.waitFor(session.peer, .notConnected) == .some(.peerDisconnected))
        #expect(session.connectedPeers.isEmpty)
        #expect(hostLog.states(of: session.peer).map(\.0) == [.connecting, .connected, .notConnected])
        _ = try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        #expect(session.connectedPeers == [peer])
    }
}
