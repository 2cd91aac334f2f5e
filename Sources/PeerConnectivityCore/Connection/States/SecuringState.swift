/// Both HELLOs allow encryption: TLS, then the pairing exchange and the certificate decision, between
/// the HELLOs and the invitation (all inside TLS).
///
/// ```
/// inviter: tls --secured()--> awaitingCommitment --PAIR-COMMIT (send PAIR-NONCE)--> awaitingNonce
///          --PAIR-NONCE--> awaitingVerdict --certificateDecided(nil) (send INVITE)--> handshake, awaitingAnswer
/// invitee: tls --secured() (send PAIR-COMMIT)--> awaitingNonce --PAIR-NONCE (send PAIR-NONCE)-->
///          awaitingVerdict --certificateDecided(nil)--> handshake, awaitingInvite (or awaitingDecision if INVITE came)
/// ```
struct SecuringState {
    typealias Action = ConnectionStateMachine.Action
    typealias Transition = ConnectionStateMachine.Transition
    typealias Invitation = ConnectionStateMachine.Invitation

    /// Where in securing the connection is. The invitation, when there is one, is the inviter's.
    enum Step {
        /// The TLS handshake is under way.
        case tls(Invitation?)
        /// The inviter waits for the invitee's PAIR-COMMIT.
        case inviterAwaitingCommitment(Invitation, PairingExchange)
        /// The inviter sent its nonce and waits for the invitee's.
        case inviterAwaitingNonce(Invitation, PairingExchange, commitment: [UInt8])
        /// The invitee sent its commitment and waits for the inviter's nonce.
        case inviteeAwaitingNonce(PairingExchange)
        /// The certificate decision is asked; an INVITE or RESUME that arrives meanwhile waits here.
        case awaitingVerdict(Invitation?, pendingInvite: Frame?)
    }

    /// The peer its HELLO named, which TLS is to prove.
    let peer: PeerID
    /// Where in securing the connection is.
    var step: Step

    /// The inviter's invitation (or RESUME), sent once secured; `nil` on the invitee.
    var opening: Invitation? {
        switch step {
        case .tls(let invitation), .awaitingVerdict(let invitation, _): return invitation
        case .inviterAwaitingCommitment(let invitation, _), .inviterAwaitingNonce(let invitation, _, _):
            return invitation
        case .inviteeAwaitingNonce: return nil
        }
    }

    /// TLS is up and the peer's certificate proves the PeerID it claimed: start the pairing exchange.
    ///
    /// - Parameter pairing: the exchange, with both keys and this side's nonce.
    /// - Returns: the invitee's PAIR-COMMIT to send; nothing for the inviter, which waits for it.
    mutating func secured(_ pairing: PairingExchange) -> Action {
        switch step {
        case .tls(let invitation?):
            step = .inviterAwaitingCommitment(invitation, pairing)
            return .none
        case .tls(.none):
            step = .inviteeAwaitingNonce(pairing)
            return .send([.pairCommit(pairing.localCommitment)])
        default:
            return .none
        }
    }

    /// A frame while TLS and the pairing exchange secure the connection.
    mutating func frameReceived(_ frame: Frame, _ settings: ConnectionSettings) -> Transition {
        switch (step, frame) {
        case (.inviterAwaitingCommitment(let invitation, let pairing), .pairCommit(let commitment)):
            step = .inviterAwaitingNonce(invitation, pairing, commitment: commitment)
            return .stay(.send([.pairNonce(pairing.localNonce)]))
        case (.inviterAwaitingNonce(let invitation, let pairing, let commitment), .pairNonce(let nonce)):
            guard pairing.verify(commitment: commitment, inviteeNonce: nonce) else {
                let reason = DisconnectReason.pairingFailed.with(
                    detail: "the invitee's nonce does not match its commitment"
                )
                return .goodbye(reason, peer: peer)
            }
            step = .awaitingVerdict(invitation, pendingInvite: nil)
            return .stay(.decideCertificate(peer, pairingCode: pairing.code(peerNonce: nonce), sending: []))
        case (.inviteeAwaitingNonce(let pairing), .pairNonce(let nonce)):
            step = .awaitingVerdict(nil, pendingInvite: nil)
            // The invitee waits for the decision instead of its handshake timeout.
            return .stay(
                .decideCertificate(
                    peer,
                    pairingCode: pairing.code(peerNonce: nonce),
                    sending: [.pairNonce(pairing.localNonce)],
                    deadline: settings.certificateDecisionTimeout
                )
            )
        case (.awaitingVerdict(.none, pendingInvite: .none), .invite),
            (.awaitingVerdict(.none, pendingInvite: .none), .resume):
            // The inviter decided first; its INVITE (or RESUME) waits for this side's decision.
            step = .awaitingVerdict(nil, pendingInvite: frame)
            return .stay(.none)
        case (_, .goodbye(let said)):
            return .quietly(said == .localDisconnect ? .peerDisconnected : said, peer: peer)
        default:
            let error = ProtocolError.unexpectedFrame(frame.type, state: stateWords)
            return .goodbye(error.disconnectReason, peer: peer)
        }
    }

    /// The certificate decision answered.
    ///
    /// - Parameter rejection: `nil` when the peer is accepted; else why it is refused (sent in GOODBYE).
    /// - Returns: the transition (the inviter's INVITE, or the close), and the invitee's INVITE or
    ///   RESUME that came while it decided, to be handled as if it came now.
    func certificateDecided(_ rejection: DisconnectReason?) -> (transition: Transition, pending: Frame?)? {
        guard case .awaitingVerdict(let invitation, let pendingInvite) = step else { return nil }
        if let rejection {
            return (.goodbye(rejection, peer: peer), nil)
        }
        if let invitation {
            let next = HandshakeState.awaitingAnswer(to: invitation, from: peer)
            return (.move(.handshake(next), .peerIdentified(peer, sending: [invitation.openingFrame])), nil)
        }
        let next = HandshakeState(step: .inviteeAwaitingInvite(peer))
        return (.move(.handshake(next), .none), pendingInvite)
    }

    /// The deadline passed: the inviter's invitation timeout, the invitee's handshake timeout, or its
    /// wait for the certificate decision.
    func deadlinePassed() -> Transition {
        if opening?.resume != nil {
            // A resume still securing its connection: closed quietly, as a plain resumer's.
            return .quietly(.timedOut, peer: peer)
        }
        switch step {
        case .tls(.some), .inviterAwaitingCommitment, .inviterAwaitingNonce, .awaitingVerdict(.some, _):
            return .goodbye(.timedOut, peer: peer)
        case .awaitingVerdict(.none, _):
            let reason = DisconnectReason.certificateRejected.with(
                detail: "no decision on \(peer)'s certificate in time"
            )
            return .goodbye(reason, peer: peer)
        case .tls(.none), .inviteeAwaitingNonce:
            return .goodbye(.handshakeTimeout, peer: peer)
        }
    }

    /// How an unexpected-frame error names this step.
    private var stateWords: String {
        switch step {
        case .tls: return "securing the connection with TLS"
        case .inviterAwaitingCommitment: return "waiting for PAIR-COMMIT"
        case .inviterAwaitingNonce, .inviteeAwaitingNonce: return "waiting for PAIR-NONCE"
        case .awaitingVerdict: return "deciding on the peer's certificate"
        }
    }
}
