import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures

/// A machine that has seen `pinned` encrypted before.
private func machine(
    _ peer: PeerID,
    role: ConnectionStateMachine.Role,
    _ encryption: EncryptionPreference,
    pinned: PeerID?
) -> ConnectionStateMachine {
    ConnectionStateMachine(
        localPeer: peer,
        role: role,
        keepaliveInterval: .seconds(1),
        livenessTimeout: .seconds(5),
        encryption: encryption,
        encryptedBefore: { $0 == pinned }
    )
}

private let invitation = ConnectionStateMachine.Invitation(
    expectedPeer: F.bob,
    context: F.buffer("join"),
    timeout: .seconds(30)
)

/// The reason a close action carries, if it is one.
private func closeReason(_ action: ConnectionStateMachine.Action) -> DisconnectReason? {
    if case .close(let reason, _) = action { return reason }
    return nil
}

@Suite("No plain connection with a peer seen encrypted before (in memory)")
struct DowngradeTests {
    @Test("a pinned peer whose HELLO says none is refused as a downgrade, with any local preference and role")
    func pinnedPeerRefusedInClear() {
        for local in EncryptionPreference.allCases where local != .required {
            var inviter = machine(F.alice, role: .inviter(invitation), local, pinned: F.bob)
            _ = inviter.channelActive()
            let refused = inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .none)))
            #expect(closeReason(refused) == .downgradeRefused, "inviter with \(local): \(refused)")
            #expect(closeReason(refused)?.detail?.contains("\(F.bob)") == true)
            #expect(refused == .close(closeReason(refused)!, sending: .goodbye(.downgradeRefused)))

            var invitee = machine(F.bob, role: .invitee, local, pinned: F.alice)
            _ = invitee.channelActive()
            let helloFromAlice = Frame.hello(Frame.Hello(peer: F.alice, encryption: .none))
            #expect(closeReason(invitee.frameReceived(helloFromAlice)) == .downgradeRefused, "invitee with \(local)")
            #expect(!invitee.isEstablished)
        }
    }

    @Test("a resumer with preference none refuses to resume in the clear with a pinned peer")
    func resumerRefusesInClear() {
        let resumption = ConnectionStateMachine.Resumption(
            expectedPeer: F.bob,
            secret: Array(repeating: 7, count: 16),
            nextExpected: 0,
            timeout: .seconds(5)
        )
        var resumer = machine(F.alice, role: .resumer(resumption), .none, pinned: F.bob)
        _ = resumer.channelActive()
        let action = resumer.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional)))
        #expect(closeReason(action) == .downgradeRefused)
    }

    @Test("a pinned peer that allows encryption is secured; an unpinned one may still go plain")
    func onlyPlainIsRefused() {
        var inviter = machine(F.alice, role: .inviter(invitation), .optional, pinned: F.bob)
        _ = inviter.channelActive()
        #expect(
            inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional))) == .startTLS(asClient: true)
        )

        var other = machine(F.alice, role: .inviter(invitation), .optional, pinned: F.eve)
        _ = other.channelActive()
        let action = other.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .none)))
        guard case .peerIdentified(F.bob, _) = action else {
            Issue.record("expected a plain connection with an unpinned peer, got \(action)")
            return
        }
        #expect(!other.isEncrypted)
    }

    @Test("the default preference is required, and required cannot be talked into plain")
    func defaultIsRequired() {
        #expect(EncryptionPreference.default == .required)
        for peer in EncryptionPreference.allCases {
            #expect(EncryptionPreference.default.negotiate(with: peer) != .plain)
        }
    }

    @Test("the downgrade reason crosses the wire in GOODBYE and reads back the same")
    func reasonOnTheWire() {
        let reason = DisconnectReason(wireValue: DisconnectReason.downgradeRefused.wireValue)
        #expect(reason == .downgradeRefused)
        #expect(DisconnectReason.downgradeRefused.wireValue == 25)
    }
}
