import Foundation
import PeerConnectivity
import Testing

/// Uninvited connections may send the handshake and nothing else: every other frame type, well formed,
/// closes the connection with GOODBYE 7 on a real socket, before and after INVITE.
@Suite("Only the handshake before acceptance, on a real socket", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct HandshakeOnlyTests {
    /// Well-formed frames of every type an uninvited connection may not send (docs/PROTOCOL.md).
    static let forbidden: [(String, [UInt8])] = [
        ("ACCEPT", HandFrames.frame(type: 0x03, body: [])),
        ("DECLINE", HandFrames.frame(type: 0x04, body: [3])),
        ("DATA", HandFrames.data(Array("x".utf8))),
        ("KEEPALIVE", HandFrames.frame(type: 0x11, body: [])),
        ("DATAGRAM-ENDPOINT", HandFrames.frame(type: 0x13, body: [0x10, 0x00] + [UInt8](repeating: 1, count: 8))),
        ("SESSION-LISTENER", HandFrames.frame(type: 0x14, body: [0x10, 0x00])),
        ("MEMBERS", HandFrames.frame(type: 0x15, body: [0])),
        (
            "OPEN",
            HandFrames.frame(
                type: 0x20,
                body: HandFrames.bigEndian(UInt32(1)) + [1] + [UInt8](repeating: 0, count: 8) + [0x61]
            )
        ),
        ("CHUNK", HandFrames.chunk(channel: 1, [1, 2, 3])),
        ("END", HandFrames.frame(type: 0x22, body: HandFrames.bigEndian(UInt32(1)))),
        ("RESET", HandFrames.frame(type: 0x23, body: HandFrames.bigEndian(UInt32(1)) + [1])),
        (
            "CREDIT",
            HandFrames.frame(type: 0x24, body: HandFrames.bigEndian(UInt32(1)) + HandFrames.bigEndian(UInt32(9)))
        ),
        ("DONE", HandFrames.frame(type: 0x25, body: HandFrames.bigEndian(UInt32(1)))),
        ("INVITE", HandFrames.invite()),  // before HELLO
    ]

    /// Reads until the advertiser closes; returns the reason of its GOODBYE, if one came.
    private func goodbyeReason(_ socket: RawSocket) async -> UInt8? {
        await socket.readFrame(ofType: 0x12)?.first
    }

    @Test("before HELLO and after it, each forbidden frame closes with GOODBYE 7; no invitation is delivered")
    func beforeInvite() async throws {
        let advertiser = try await loopbackAdvertiser("strict", encryption: .none) { $0.logger.logLevel = .critical }
        let delivered = Locked(0)
        let app = Task {
            for await invitation in advertiser.invitations {
                delivered.withLock { $0 += 1 }
                invitation.decline()
            }
        }
        for (name, frame) in Self.forbidden {
            let bare = try await RawSocket(port: advertiser.port!)
            bare.send(frame)
            #expect(await goodbyeReason(bare) == 7, "\(name) before HELLO")
            guard name != "INVITE" else { continue }
            let greeted = try await RawSocket(port: advertiser.port!)
            greeted.send(HandFrames.hello() + frame)
            #expect(await goodbyeReason(greeted) == 7, "\(name) after HELLO")
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(delivered.value == 0)
        await advertiser.stop()
        app.cancel()
    }

    @Test(
        "after INVITE, while the app decides, each forbidden frame closes and the invitation can no longer be accepted"
    )
    func pendingInvitation() async throws {
        let advertiser = try await loopbackAdvertiser("undecided", encryption: .none) {
            $0.logger.logLevel = .critical
            $0.maximumPendingInvitationsPerPeer = 100
            $0.invitationBurstPerPeer = 100
        }
        var invitations = advertiser.invitations.makeAsyncIterator()
        let session = Session(peer: advertiser.peer, encryptionPreference: .none)
        for (name, frame) in Self.forbidden.filter({ $0.0 != "INVITE" }) + [("second INVITE", HandFrames.invite())] {
            let socket = try await RawSocket(port: advertiser.port!)
            socket.send(HandFrames.hello() + HandFrames.invite())
            let invitation = try #require(await invitations.next())
            socket.send(frame)
            #expect(await goodbyeReason(socket) == 7, "\(name) while the invitation was pending")
            await #expect(throws: InvitationError.self, "\(name)") { try await invitation.accept(into: session) }
        }
        #expect(session.connectedPeers.isEmpty)
        await advertiser.stop()
    }
}
