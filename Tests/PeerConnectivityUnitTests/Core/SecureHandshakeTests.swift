import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures

/// A stand-in for SHA-256 in memory: 32 bytes that depend on every input byte (FNV-1a, four lanes).
private let toyHash: PairingExchange.Hash = { bytes in
    (0..<32).map { lane in
        var value: UInt64 = 0xcbf2_9ce4_8422_2325 &+ UInt64(lane)
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return UInt8(truncatingIfNeeded: value >> 24)
    }
}

private let aliceKey = Array(repeating: UInt8(0xA1), count: 65)
private let bobKey = Array(repeating: UInt8(0xB0), count: 65)
private let nonceA = Array(repeating: UInt8(0x0A), count: 32)
private let nonceB = Array(repeating: UInt8(0x0B), count: 32)

/// Alice's (the inviter's) and Bob's halves of one pairing exchange, with the toy hash.
private func pairingExchanges() -> (inviter: PairingExchange, invitee: PairingExchange) {
    (
        PairingExchange(isInviter: true, localKey: aliceKey, peerKey: bobKey, localNonce: nonceA, hash: toyHash),
        PairingExchange(isInviter: false, localKey: bobKey, peerKey: aliceKey, localNonce: nonceB, hash: toyHash)
    )
}
private let invitation = ConnectionStateMachine.Invitation(
    expectedPeer: F.bob,
    context: F.buffer("join"),
    timeout: .seconds(30)
)
private let invite = Frame.invite(
    Frame.Invite(timeoutMilliseconds: 30_000, fields: .defaultLimits, context: F.buffer("join"))
)

private func machine(_ peer: PeerID, inviter: Bool, _ encryption: EncryptionPreference) -> ConnectionStateMachine {
    ConnectionStateMachine(
        localPeer: peer,
        role: inviter ? .inviter(invitation) : .invitee,
        keepaliveInterval: .seconds(1),
        livenessTimeout: .seconds(5),
        encryption: encryption
    )
}

private func frames(_ action: ConnectionStateMachine.Action) -> [Frame] {
    switch action {
    case .send(let frames), .scheduleDeadline(_, let frames): return frames
    case .peerIdentified(_, let frames): return frames
    case .decideCertificate(_, _, let frames, _): return frames
    case .close(_, let frame?): return [frame]
    default: return []
    }
}

@Suite("Encryption preference negotiation and the secured handshake (in memory)")
struct SecureHandshakeTests {
    @Test("both allow → encrypted; none with optional → plain; required with none → refused on both sides")
    func negotiation() {
        let all = EncryptionPreference.allCases
        for local in all {
            for peer in all {
                let outcome = local.negotiate(with: peer)
                switch (local, peer) {
                case (.required, .none), (.none, .required):
                    guard case .refused(let detail) = outcome else {
                        Issue.record("\(local) with \(peer) gave \(outcome)")
                        continue
                    }
                    #expect(detail.contains(local == .required ? "this side requires" : "the peer requires"))
                case (.none, _), (_, .none): #expect(outcome == .plain)
                default: #expect(outcome == .encrypted)
                }
                // The same verdict on both sides.
                #expect((outcome == .encrypted) == (peer.negotiate(with: local) == .encrypted))
            }
        }
    }

    @Test("HELLO carries the preference; an inviter that may encrypt sends INVITE only after the invitee's HELLO")
    func inviterWaitsForHelloBeforeInvite() {
        var inviter = machine(F.alice, inviter: true, .optional)
        #expect(
            inviter.channelActive()
                == .scheduleDeadline(.seconds(30), sending: [.hello(Frame.Hello(peer: F.alice, encryption: .optional))])
        )
        let plainHello = Frame.hello(Frame.Hello(peer: F.bob, encryption: .none))
        #expect(inviter.frameReceived(plainHello) == .peerIdentified(F.bob, sending: [invite]))
        #expect(!inviter.isEncrypted)
        #expect(
            inviter.frameReceived(.accept(.defaultLimits)) == .establish(F.bob, sending: nil, finishingHandshake: true)
        )
    }

    @Test("an inviter with preference none sends HELLO and INVITE at once, as before")
    func plainInviterUnchanged() {
        var inviter = machine(F.alice, inviter: true, .none)
        #expect(
            inviter.channelActive()
                == .scheduleDeadline(.seconds(30), sending: [.hello(Frame.Hello(peer: F.alice)), invite])
        )
        let optionalHello = Frame.hello(Frame.Hello(peer: F.bob, encryption: .optional))
        #expect(inviter.frameReceived(optionalHello) == .peerIdentified(F.bob))
    }

    @Test("required against none closes with encryptionRequired on the inviter and on the invitee")
    func requiredAgainstNone() {
        var inviter = machine(F.alice, inviter: true, .required)
        _ = inviter.channelActive()
        let action = inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .none)))
        guard case .close(let reason, .goodbye(let said)?) = action else {
            Issue.record("expected a close with GOODBYE, got \(action)")
            return
        }
        #expect(reason == .encryptionRequired && said == .encryptionRequired)
        #expect(reason.detail?.contains("this side requires encryption") == true)

        var invitee = machine(F.bob, inviter: false, .none)
        _ = invitee.channelActive()
        let refused = invitee.frameReceived(.hello(Frame.Hello(peer: F.alice, encryption: .required)))
        guard case .close(let inviteeReason, .goodbye?) = refused else {
            Issue.record("expected a close with GOODBYE, got \(refused)")
            return
        }
        #expect(inviteeReason == .encryptionRequired)
        #expect(inviteeReason.detail?.contains("the peer requires encryption") == true)
        // A GOODBYE 15 from the peer reads as the same reason.
        #expect(DisconnectReason(wireValue: DisconnectReason.encryptionRequired.wireValue) == .encryptionRequired)
    }

    @Test("the full secured handshake: TLS, commitment, nonces, equal pairing codes, verdicts, INVITE, ACCEPT")
    func securedHandshake() {
        var inviter = machine(F.alice, inviter: true, .optional)
        var invitee = machine(F.bob, inviter: false, .required)
        let helloA = frames(inviter.channelActive())
        let helloB = frames(invitee.channelActive())
        #expect(helloA.count == 1 && helloB.count == 1)
        #expect(inviter.frameReceived(helloB[0]) == .startTLS(asClient: true))
        #expect(invitee.frameReceived(helloA[0]) == .startTLS(asClient: false))
        #expect(inviter.isEncrypted && invitee.isEncrypted)
        // Nothing but GOODBYE is allowed while TLS is set up.
        var probe = invitee
        guard case .close(let violation, _) = probe.frameReceived(.data(F.buffer("early"))) else {
            Issue.record("DATA during TLS setup was not a violation")
            return
        }
        #expect(violation == .protocolViolation)

        let (pairingA, pairingB) = pairingExchanges()
        #expect(inviter.secured(pairingA) == .none)
        let commit = frames(invitee.secured(pairingB))
        #expect(commit == [.pairCommit(pairingB.localCommitment)])
        let nonceFromA = frames(inviter.frameReceived(commit[0]))
        #expect(nonceFromA == [.pairNonce(nonceA)])
        let inviteeAsks = invitee.frameReceived(nonceFromA[0])
        guard case .decideCertificate(F.alice, let codeB, let sent, _) = inviteeAsks else {
            Issue.record("invitee: expected decideCertificate, got \(inviteeAsks)")
            return
        }
        #expect(sent == [.pairNonce(nonceB)])
        let inviterAsks = inviter.frameReceived(sent[0])
        guard case .decideCertificate(F.bob, let codeA, [], nil) = inviterAsks else {
            Issue.record("inviter: expected decideCertificate, got \(inviterAsks)")
            return
        }
        #expect(codeA == codeB)
        #expect(codeA.count == 6 && codeA.allSatisfy(\.isNumber))

        // The inviter decides first: its INVITE waits on the invitee until the invitee decides.
        let inviteAction = inviter.certificateDecided(nil)
        #expect(inviteAction == .peerIdentified(F.bob, sending: [invite]))
        #expect(invitee.frameReceived(invite) == .none)
        #expect(
            invitee.certificateDecided(nil)
                == .deliverInvitation(from: F.alice, context: F.buffer("join"), timeout: .seconds(30))
        )
        #expect(
            invitee.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(5))
                == .establish(F.alice, sending: .accept(.defaultLimits), finishingHandshake: false)
        )
        #expect(
            inviter.frameReceived(.accept(.defaultLimits)) == .establish(F.bob, sending: nil, finishingHandshake: true)
        )
    }

    @Test("a nonce that does not match the commitment closes the connection with pairingFailed")
    func wrongCommitment() {
        var inviter = machine(F.alice, inviter: true, .required)
        _ = inviter.channelActive()
        _ = inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional)))
        let pairing = PairingExchange(
            isInviter: true,
            localKey: aliceKey,
            peerKey: bobKey,
            localNonce: nonceA,
            hash: toyHash
        )
        _ = inviter.secured(pairing)
        let honest = PairingExchange(
            isInviter: false,
            localKey: bobKey,
            peerKey: aliceKey,
            localNonce: nonceB,
            hash: toyHash
        )
        _ = inviter.frameReceived(.pairCommit(honest.localCommitment))
        // The invitee (or a man in the middle) changes its nonce after seeing the inviter's.
        let action = inviter.frameReceived(.pairNonce(Array(repeating: 0x0C, count: 32)))
        guard case .close(let reason, .goodbye(let said)?) = action else {
            Issue.record("expected a close, got \(action)")
            return
        }
        #expect(reason == .pairingFailed && said == .pairingFailed)
    }

    @Test("a rejected certificate closes with certificateRejected, told to the peer")
    func certificateRejected() {
        var invitee = machine(F.bob, inviter: false, .optional)
        _ = invitee.channelActive()
        _ = invitee.frameReceived(.hello(Frame.Hello(peer: F.alice, encryption: .optional)))
        let pairing = PairingExchange(
            isInviter: false,
            localKey: bobKey,
            peerKey: aliceKey,
            localNonce: nonceB,
            hash: toyHash
        )
        _ = invitee.secured(pairing)
        _ = invitee.frameReceived(.pairNonce(nonceA))
        let rejection = DisconnectReason.certificateRejected.with(detail: "the key of alice changed")
        let action = invitee.certificateDecided(rejection)
        guard case .close(let reason, .goodbye(let said)?) = action else {
            Issue.record("expected a close, got \(action)")
            return
        }
        #expect(reason == .certificateRejected && said == .certificateRejected)
        #expect(reason.detail == "the key of alice changed")
    }

    @Test("an unanswered decision on the invitee rejects the certificate at the deadline")
    func decisionDeadline() {
        var invitee = machine(F.bob, inviter: false, .optional)
        _ = invitee.channelActive()
        _ = invitee.frameReceived(.hello(Frame.Hello(peer: F.alice, encryption: .required)))
        _ = invitee.secured(
            PairingExchange(isInviter: false, localKey: bobKey, peerKey: aliceKey, localNonce: nonceB, hash: toyHash)
        )
        _ = invitee.frameReceived(.pairNonce(nonceA))
        guard case .close(let reason, .goodbye?) = invitee.deadlinePassed() else {
            Issue.record("the deadline did not close the connection")
            return
        }
        #expect(reason == .certificateRejected)
    }

    @Test("a failed binding closes with identityMismatch and tells the peer")
    func bindingFailure() {
        var inviter = machine(F.alice, inviter: true, .optional)
        _ = inviter.channelActive()
        _ = inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional)))
        let reason = DisconnectReason.identityMismatch.with(detail: "bob's id is not derived from its key")
        #expect(inviter.securityFailed(reason, tellingPeer: true) == .close(reason, sending: .goodbye(reason)))
        #expect(inviter.securityFailed(reason, tellingPeer: true) == .none)
    }

    @Test("pairing codes differ when a man in the middle substitutes a key")
    func pairingCodeBindsKeys() {
        let mallory = Array(repeating: UInt8(0x66), count: 65)
        let a = PairingExchange(
            isInviter: true,
            localKey: aliceKey,
            peerKey: mallory,
            localNonce: nonceA,
            hash: toyHash
        )
        let b = PairingExchange(isInviter: false, localKey: bobKey, peerKey: mallory, localNonce: nonceB, hash: toyHash)
        #expect(a.code(peerNonce: nonceB) != b.code(peerNonce: nonceA))
        let honestA = PairingExchange(
            isInviter: true,
            localKey: aliceKey,
            peerKey: bobKey,
            localNonce: nonceA,
            hash: toyHash
        )
        let honestB = PairingExchange(
            isInviter: false,
            localKey: bobKey,
            peerKey: aliceKey,
            localNonce: nonceB,
            hash: toyHash
        )
        #expect(honestA.code(peerNonce: nonceB) == honestB.code(peerNonce: nonceA))
        #expect(honestA.verify(commitment: honestB.localCommitment, inviteeNonce: nonceB))
        #expect(!honestA.verify(commitment: honestB.localCommitment, inviteeNonce: nonceA))
    }

    @Test("PAIR-COMMIT and PAIR-NONCE round-trip and must be 32 bytes")
    func pairingFramesCodec() throws {
        for frame in [Frame.pairCommit(nonceA), .pairNonce(nonceB)] {
            var buffer = FrameEncoder.buffer(for: frame)
            #expect(buffer.readableBytes == 5 + 32)
            #expect(try FrameParser.parse(&buffer, maximumFrameLength: F.sessionLimit) == frame)
        }
        #expect(throws: ProtocolError.self) {
            try F.parse(F.rawFrame(type: 0x05, payload: Array(repeating: 1, count: 31)))
        }
        #expect(throws: ProtocolError.self) {
            try F.parse(F.rawFrame(type: 0x06, payload: Array(repeating: 1, count: 33)))
        }
    }

    @Test("the invitee waits for the certificate decision under its decision deadline, the inviter under its own")
    func inviteeDecisionDeadline() {
        var inviter = ConnectionStateMachine(
            localPeer: F.alice,
            role: .inviter(invitation),
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(5),
            certificateDecisionTimeout: .seconds(8),
            encryption: .optional
        )
        var invitee = ConnectionStateMachine(
            localPeer: F.bob,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(5),
            certificateDecisionTimeout: .seconds(8),
            encryption: .optional
        )
        _ = inviter.channelActive()
        _ = invitee.channelActive()
        #expect(
            inviter.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional))) == .startTLS(asClient: true)
        )
        #expect(
            invitee.frameReceived(.hello(Frame.Hello(peer: F.alice, encryption: .optional)))
                == .startTLS(asClient: false)
        )
        let (pairingA, pairingB) = pairingExchanges()
        _ = inviter.secured(pairingA)
        let commit = frames(invitee.secured(pairingB))
        let nonce = frames(inviter.frameReceived(commit[0]))
        guard case .decideCertificate(F.alice, _, let sent, let inviteeDeadline) = invitee.frameReceived(nonce[0])
        else {
            Issue.record("the invitee asked no decision")
            return
        }
        #expect(inviteeDeadline == .seconds(8))
        guard case .decideCertificate(F.bob, _, _, let inviterDeadline) = inviter.frameReceived(sent[0]) else {
            Issue.record("the inviter asked no decision")
            return
        }
        #expect(inviterDeadline == nil)
        // No verdict in time: the invitee closes, naming the certificate.
        guard case .close(let reason, .goodbye) = invitee.deadlinePassed() else {
            Issue.record("the invitee did not close at its decision deadline")
            return
        }
        #expect(reason == .certificateRejected)
    }
}
