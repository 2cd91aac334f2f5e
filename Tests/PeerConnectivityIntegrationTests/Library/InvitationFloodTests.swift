import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// One peer sends 200 invitations at once over real sockets (hand-made HELLO + INVITE).
@Suite("Invitation floods from one peer", .serialized, .timeLimit(.minutes(1)))
struct InvitationFloodTests {
    /// Default invitation limits; no log lines for the 200 refusals. The flood's connections all come
    /// from 127.0.0.1 and are pending for an instant each: a larger per-address handshake cap keeps
    /// the handshake limit (ConnectionFloodTests) out of this test of the invitation limits.
    private static func quiet(_ configuration: inout Advertiser.Configuration) {
        configuration.logger.logLevel = .critical
        configuration.maximumPendingHandshakesPerAddress = 64
    }

    /// Sends 200 invitations from one peer id, each on its own connection; returns the sockets.
    ///
    /// All from one thread of the test's own, as fast as it can connect: the flood, not the test, sets the pace.
    private func flood(port: Int, from id: UUID) async throws -> [RawSocket] {
        try await onOwnThread {
            try (0..<200).map { _ in
                let socket = try RawSocket(blockingConnectTo: port)
                socket.send(HandFrames.hello(name: "flooder", id: id) + HandFrames.invite(timeoutMilliseconds: 30_000))
                return socket
            }
        }
    }

    /// How long the flood's sockets wait for their DECLINEs, in seconds: a declined invitation's may take a second
    /// or two on a loaded machine (the suite in parallel on two CPUs), and a held one's never comes.
    private static let declineWait = 8

    /// The reason bytes of the DECLINEs the flood's sockets received (nil: none within ``declineWait`` times
    /// ``slowdown``).
    private func declines(_ sockets: [RawSocket]) async -> [UInt8?] {
        await onOwnThread {
            // One wait for all: the first held invitation's socket waits out the rest of it, the others only read
            // what has come by then.
            let deadline = ContinuousClock.now + .seconds(Self.declineWait * slowdown)
            return sockets.map { socket in
                socket.setReadTimeout(deadline - .now)
                return socket.readFrameBlocking(ofType: 0x04)?.first
            }
        }
    }

    @Test("unanswered: the app sees at most 2 of the flood's 200 invitations, the rest are declined as rate-limited")
    func heldInvitations() async throws {
        let advertiser = try await loopbackAdvertiser("flooded-app", encryption: .none, configure: Self.quiet)
        let session = Session(peer: advertiser.peer, encryptionPreference: .none)
        let flooder = UUID()
        let seen = Locked<[PeerID]>([])
        let app = Task {
            for await invitation in advertiser.invitations {
                seen.withLock { $0.append(invitation.peer) }
                // The flooder's invitations are left unanswered; anyone else is welcome.
                if invitation.peer.id != flooder { try? await invitation.accept(into: session) }
            }
        }
        let sockets = try await flood(port: advertiser.port!, from: flooder)
        let reasons = await declines(sockets)
        let rateLimited = reasons.filter { $0 == 20 }.count
        #expect(rateLimited >= 198 - 2, "\(rateLimited) of 200 declined as rate-limited")
        #expect(reasons.filter { $0 == nil }.count <= 2, "more than 2 invitations were held")

        // Another peer on the same host still gets in.
        let visitor = Session(peer: try PeerID(displayName: "welcome"), encryptionPreference: .none)
        let peer = try await visitor.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        #expect(peer == advertiser.peer)
        let fromFlooder = seen.withLock { $0.filter { $0.id == flooder }.count }
        #expect(fromFlooder >= 1 && fromFlooder <= 2, "the app saw \(fromFlooder) of the flood's invitations")
        await visitor.disconnect()
        await advertiser.stop()
        await session.disconnect()
        app.cancel()
    }

    @Test("declined at once: the app sees the burst of 4 and what the bucket earns back, not 200")
    func answeredInvitations() async throws {
        let advertiser = try await loopbackAdvertiser("busy-app", encryption: .none, configure: Self.quiet)
        let seen = Locked(0)
        let app = Task {
            for await invitation in advertiser.invitations {
                seen.withLock { $0 += 1 }
                invitation.decline()
            }
        }
        let start = ContinuousClock.now
        let sockets = try await flood(port: advertiser.port!, from: UUID())
        let reasons = await declines(sockets)
        let elapsed = start.duration(to: .now)
        let count = seen.withLock { $0 }
        // 4 at once, then one per second (fewer when two were still pending as the next arrived).
        let allowed = 4 + Int(elapsed.components.seconds) + 1
        #expect(count >= 2 && count <= allowed, "the app saw \(count) invitations in \(elapsed)")
        #expect(reasons.filter { $0 == 20 }.count >= 200 - allowed)
        #expect(reasons.filter { $0 == 3 }.count == count, "each invitation the app saw was declined by it")
        await advertiser.stop()
        app.cancel()
    }
}
