import Foundation
import PeerConnectivity
import Testing

/// Bad input over real sockets: the advertiser closes that connection and goes on serving.
@Suite("Hostile input on a real socket", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct HostileInputTests {
    /// An advertiser on loopback without DNS-SD that accepts every invitation into its session.
    final class Host: Sendable {
        let advertiser: Advertiser
        let session: Session
        let task: Task<Void, Never>

        init() async throws {
            advertiser = try await loopbackAdvertiser("target", encryption: .none)
            session = Session(peer: advertiser.peer, encryptionPreference: .none)
            task = acceptAll(advertiser, into: session)
        }

        var port: Int { advertiser.port! }

        /// A real peer still connects.
        func stillServes() async throws {
            let visitor = Session(peer: try PeerID(displayName: "visitor"), encryptionPreference: .none)
            let peer = try await visitor.connectPeer(host: "127.0.0.1", port: port, timeout: invitationTimeout)
            #expect(peer == advertiser.peer)
            await visitor.disconnect()
        }
    }

    /// Sends `bytes`, then expects the advertiser to close the connection (after at most a GOODBYE).
    private func expectClosed(after bytes: [UInt8], on host: Host, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let socket = try await RawSocket(port: host.port)
        socket.send(bytes)
        let reply = await socket.readUntilClosed()
        #expect(reply != nil, "the connection was not closed (silent for \(waitLimit))", sourceLocation: sourceLocation)
    }

    @Test("garbage, oversize lengths, unknown types and DATA before acceptance each close the connection")
    func malformed() async throws {
        let host = try await Host()
        try await expectClosed(after: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), on: host)
        try await expectClosed(after: [0xFF, 0xFF, 0xFF, 0xFF], on: host)
        try await expectClosed(after: [0x00, 0x00, 0x00, 0x00], on: host)
        try await expectClosed(after: HandFrames.frame(type: 0x7F, body: []), on: host)
        try await expectClosed(after: HandFrames.data(Array("sneaky".utf8)), on: host)
        try await expectClosed(after: HandFrames.hello() + HandFrames.data(Array("too early".utf8)), on: host)
        try await expectClosed(after: HandFrames.hello() + HandFrames.hello(), on: host)
        try await expectClosed(
            after: HandFrames.frame(type: 0x01, body: [0x50, 0x43, 0x4F, 0x4E, 0x00, 0x09]),
            on: host
        )
        var badName = HandFrames.hello(name: "abc")
        badName[badName.count - 3] = 0xFF
        try await expectClosed(after: badName, on: host)
        try await host.stillServes()
    }

    @Test("an invited connection that sends DATA before the answer is closed; nothing is delivered")
    func dataBeforeAcceptance() async throws {
        let advertiser = try await loopbackAdvertiser("slow-target", encryption: .none)
        let socket = try await RawSocket(port: advertiser.port!)
        socket.send(HandFrames.hello() + HandFrames.invite())
        var invitations = advertiser.invitations.makeAsyncIterator()
        let invitation = try #require(await invitations.next())
        socket.send(HandFrames.data(Array("not yet".utf8)))
        #expect(await socket.readUntilClosed() != nil)
        let session = Session(peer: advertiser.peer, encryptionPreference: .none)
        let error = await #expect(throws: InvitationError.self) { try await invitation.accept(into: session) }
        #expect(error?.reason == .protocolViolation, "the real reason, not a timeout: \(String(describing: error))")
        #expect(session.connectedPeers.isEmpty)
    }

    @Test("a connection that never says HELLO is closed at the handshake timeout")
    func silentConnection() async throws {
        let advertiser = try await loopbackAdvertiser("patient", encryption: .none) {
            $0.handshakeTimeout = .milliseconds(500)
        }
        // The clock starts before the connection does: the advertiser's timer cannot start earlier, while the
        // connecting task may resume long after it on a loaded machine.
        let start = ContinuousClock.now
        let socket = try await RawSocket(port: advertiser.port!)
        #expect(await socket.readUntilClosed() != nil)
        let elapsed = start.duration(to: .now)
        #expect(elapsed >= .milliseconds(450) && elapsed < .milliseconds(500) + promptly, "closed after \(elapsed)")
    }

    @Test("invitations beyond the pending limit are declined as busy")
    func pendingInvitationLimit() async throws {
        let advertiser = try await loopbackAdvertiser("popular", encryption: .none) { $0.maximumPendingInvitations = 2 }
        let sockets = [try await RawSocket(port: advertiser.port!), try await RawSocket(port: advertiser.port!)]
        for socket in sockets { socket.send(HandFrames.hello() + HandFrames.invite()) }
        var invitations = advertiser.invitations.makeAsyncIterator()
        _ = await invitations.next()
        _ = await invitations.next()
        let session = Session(peer: try PeerID(displayName: "one-too-many"), encryptionPreference: .none)
        let error = await #expect(throws: InvitationError.self) {
            try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        }
        #expect(error?.reason == .busy)
    }
}
