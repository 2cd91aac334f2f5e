import NIOCore

/// The plain part of the handshake: the HELLOs, then INVITE or RESUME and the answer to it.
///
/// ```
/// inviter: awaitingHello --HELLO--> awaitingAnswer --ACCEPT--> established
/// invitee: awaitingHello --HELLO--> awaitingInvite --INVITE--> awaitingDecision --accept()--> established
/// resumer: awaitingHello --HELLO--> awaitingAnswer --RESUMED--> established (resumed)
/// invitee: awaitingHello --HELLO--> awaitingInvite --RESUME--> awaitingResumeDecision --acceptResume()--> established
/// ```
/// When both HELLOs allow encryption the machine leaves for ``SecuringState`` after the HELLOs and
/// comes back to `awaitingAnswer` or `awaitingInvite` once the connection is secured.
struct HandshakeState {
    typealias Action = ConnectionStateMachine.Action
    typealias Transition = ConnectionStateMachine.Transition
    typealias Invitation = ConnectionStateMachine.Invitation

    /// Where in the handshake the connection is.
    enum Step {
        /// The channel is not active yet.
        case idle(ConnectionStateMachine.Role)
        /// The inviter (or an encrypting resumer) sent HELLO, and INVITE unless it waits for TLS.
        case inviterAwaitingHello(Invitation, inviteSent: Bool)
        /// The inviter sent INVITE to the peer that answered.
        case inviterAwaitingAnswer(PeerID)
        /// The invitee sent HELLO.
        case inviteeAwaitingHello
        /// The invitee knows the peer and waits for INVITE or RESUME.
        case inviteeAwaitingInvite(PeerID)
        /// The invitation is with the application; `peerFields` are what its INVITE said.
        case inviteeAwaitingDecision(PeerID, peerFields: HandshakeFields)
        /// The plain resumer sent HELLO and RESUME.
        case resumerAwaitingHello(ConnectionStateMachine.Resumption)
        /// The resumer knows the peer and waits for RESUMED or DECLINE.
        case resumerAwaitingAnswer(PeerID)
        /// A RESUME is with the session; `peerExpects` is the count it carried.
        case inviteeAwaitingResumeDecision(PeerID, peerExpects: UInt64)
    }

    /// Where in the handshake the connection is.
    var step: Step

    /// An accepted invitation or RESUME: the state to move to, and the action.
    typealias Accepted = (state: EstablishedState, action: Action)

    /// The state that waits for the answer to `invitation`'s opening frame (INVITE or RESUME).
    static func awaitingAnswer(to invitation: Invitation, from peer: PeerID) -> HandshakeState {
        HandshakeState(step: invitation.resume == nil ? .inviterAwaitingAnswer(peer) : .resumerAwaitingAnswer(peer))
    }

    /// The peer, once its HELLO has arrived.
    var peer: PeerID? {
        switch step {
        case .idle, .inviterAwaitingHello, .inviteeAwaitingHello, .resumerAwaitingHello: return nil
        case .inviterAwaitingAnswer(let peer), .inviteeAwaitingInvite(let peer),
            .inviteeAwaitingDecision(let peer, _),
            .resumerAwaitingAnswer(let peer), .inviteeAwaitingResumeDecision(let peer, _):
            return peer
        }
    }

    /// Whether the channel is not active yet.
    var isIdle: Bool {
        if case .idle = step { return true }
        return false
    }

    /// Whether the peer's part is done (the invitee holds its INVITE or RESUME): those waiting for the
    /// handshake have been told.
    var peerPartFinished: Bool {
        switch step {
        case .inviteeAwaitingDecision, .inviteeAwaitingResumeDecision: return true
        default: return false
        }
    }

    /// The channel is active: the inviter sends HELLO and INVITE at once (INVITE only after the
    /// invitee's HELLO when it may encrypt: the INVITE then goes inside TLS), the invitee its HELLO.
    /// Each starts the deadline of its role.
    mutating func channelActive(_ settings: ConnectionSettings) -> Action {
        guard case .idle(let role) = step else { return .none }
        let hello = Frame.hello(Frame.Hello(peer: settings.localPeer, encryption: settings.encryption))
        switch role {
        case .inviter(let invitation):
            if settings.encryption != .none {
                step = .inviterAwaitingHello(invitation, inviteSent: false)
                return .scheduleDeadline(invitation.timeout, sending: [hello])
            }
            step = .inviterAwaitingHello(invitation, inviteSent: true)
            return .scheduleDeadline(invitation.timeout, sending: [hello, invitation.inviteFrame])
        case .invitee:
            step = .inviteeAwaitingHello
            return .scheduleDeadline(settings.handshakeTimeout, sending: [hello])
        case .resumer(let resumption):
            let resume = Frame.Resume(
                peer: settings.localPeer.id,
                secret: resumption.secret,
                nextExpected: resumption.nextExpected
            )
            if settings.encryption != .none {
                // RESUME goes where INVITE would, after TLS and the pairing exchange when both allow them.
                var opening = Invitation(
                    expectedPeer: resumption.expectedPeer,
                    context: ByteBuffer(),
                    timeout: resumption.timeout
                )
                opening.resume = resume
                step = .inviterAwaitingHello(opening, inviteSent: false)
                return .scheduleDeadline(resumption.timeout, sending: [hello])
            }
            step = .resumerAwaitingHello(resumption)
            return .scheduleDeadline(resumption.timeout, sending: [hello, .resume(resume)])
        }
    }

    /// A frame during the plain part of the handshake (HELLO, INVITE or RESUME, and their answers).
    mutating func frameReceived(_ frame: Frame, _ settings: ConnectionSettings) -> Transition {
        switch (step, frame) {
        case (.inviterAwaitingHello(let invitation, let inviteSent), .hello(let hello)):
            return inviterReceived(hello, invitation: invitation, inviteSent: inviteSent, settings)
        case (.inviterAwaitingAnswer(let peer), .accept(let fields)):
            let established = EstablishedState(
                peer: peer,
                settings: settings,
                isInviter: true,
                peerFields: fields
            )
            return .move(.established(established), .establish(peer, sending: nil, finishingHandshake: true))
        case (.inviterAwaitingAnswer(let peer), .decline(let reason)):
            return .quietly(reason == .localDisconnect ? .declined : reason, peer: peer)

        case (.resumerAwaitingHello(let resumption), .hello(let hello)):
            guard hello.peer == resumption.expectedPeer else {
                let detail = "resuming \(resumption.expectedPeer), \(hello.peer) answered"
                return .goodbye(.unexpectedPeer.with(detail: detail), peer: hello.peer)
            }
            // This side sent RESUME in the clear (its preference is none); refuse to go on with a peer
            // it has seen encrypted.
            if let refusal = settings.downgradeRefusal(for: hello.peer) {
                return .goodbye(refusal, peer: hello.peer)
            }
            step = .resumerAwaitingAnswer(hello.peer)
            return .stay(.peerIdentified(hello.peer))
        case (.resumerAwaitingAnswer(let peer), .resumed(let peerExpects)):
            let established = EstablishedState(peer: peer, settings: settings, isInviter: true)
            let action = Action.establishResumed(peer, peerExpects: peerExpects, sending: nil, finishingHandshake: true)
            return .move(.established(established), action)
        case (.resumerAwaitingAnswer(let peer), .decline(let reason)):
            return .quietly(reason == .localDisconnect ? .resumeRefused : reason, peer: peer)
        case (.inviteeAwaitingInvite(let peer), .resume(let resume)):
            guard resume.peer == peer.id else {
                let error = ProtocolError.malformed(.resume, "RESUME names \(resume.peer), HELLO named \(peer.id)")
                return .goodbye(error.disconnectReason, peer: peer)
            }
            step = .inviteeAwaitingResumeDecision(peer, peerExpects: resume.nextExpected)
            return .stay(
                .deliverResume(
                    from: peer,
                    secret: resume.secret,
                    peerExpects: resume.nextExpected,
                    deadline: settings.handshakeTimeout
                )
            )

        case (.inviteeAwaitingHello, .hello(let hello)):
            return inviteeReceived(hello, settings)
        case (.inviteeAwaitingInvite(let peer), .invite(let invite)):
            // The parser lets no INVITE through without the maximum message length.
            step = .inviteeAwaitingDecision(peer, peerFields: invite.fields)
            let asked = TimeAmount.milliseconds(Int64(invite.timeoutMilliseconds))
            let timeout = min(asked, settings.maximumInvitationTimeout)
            return .stay(.deliverInvitation(from: peer, context: invite.context, timeout: timeout))

        case (.idle, _):
            break  // nothing is allowed before the channel is active, not even GOODBYE
        case (_, .goodbye(let said)):
            return .quietly(said == .localDisconnect ? .peerDisconnected : said, peer: peer)
        default:
            break
        }
        let error = ProtocolError.unexpectedFrame(frame.type, state: stateWords)
        return .goodbye(error.disconnectReason, peer: peer)
    }

    /// The invitee's HELLO reached the inviter (or an encrypting resumer).
    private mutating func inviterReceived(
        _ hello: Frame.Hello,
        invitation: Invitation,
        inviteSent: Bool,
        _ settings: ConnectionSettings
    ) -> Transition {
        if hello.peer == settings.localPeer {
            return .goodbye(.unexpectedPeer.with(detail: "connected to itself"), peer: hello.peer)
        }
        if let expected = invitation.expectedPeer, expected != hello.peer {
            let detail = "expected \(expected), \(hello.peer) answered"
            return .goodbye(.unexpectedPeer.with(detail: detail), peer: hello.peer)
        }
        switch settings.encryption.negotiate(with: hello.encryption) {
        case .refused(let detail):
            return .goodbye(.encryptionRequired.with(detail: detail), peer: hello.peer)
        case .encrypted:
            let securing = SecuringState(peer: hello.peer, step: .tls(invitation))
            return .move(.securing(securing), .startTLS(asClient: true))
        case .plain:
            if let refusal = settings.downgradeRefusal(for: hello.peer) {
                return .goodbye(refusal, peer: hello.peer)
            }
            self = Self.awaitingAnswer(to: invitation, from: hello.peer)
            return .stay(.peerIdentified(hello.peer, sending: inviteSent ? [] : [invitation.openingFrame]))
        }
    }

    /// The inviter's HELLO reached the invitee.
    private mutating func inviteeReceived(_ hello: Frame.Hello, _ settings: ConnectionSettings) -> Transition {
        if hello.peer == settings.localPeer {
            return .goodbye(.unexpectedPeer.with(detail: "connected to itself"), peer: hello.peer)
        }
        switch settings.encryption.negotiate(with: hello.encryption) {
        case .refused(let detail):
            return .goodbye(.encryptionRequired.with(detail: detail), peer: hello.peer)
        case .encrypted:
            return .move(.securing(SecuringState(peer: hello.peer, step: .tls(nil))), .startTLS(asClient: false))
        case .plain:
            if let refusal = settings.downgradeRefusal(for: hello.peer) {
                return .goodbye(refusal, peer: hello.peer)
            }
            step = .inviteeAwaitingInvite(hello.peer)
            return .stay(.none)
        }
    }

    /// The application accepted the invitation: the machine moves to established.
    ///
    /// - Parameters:
    ///   - maximumMessageLength: the largest message the accepting session takes, sent in ACCEPT.
    ///   - settings: the machine's settings.
    /// - Returns: `nil` when no invitation is pending.
    func accept(maximumMessageLength: Int, _ settings: ConnectionSettings) -> Accepted? {
        guard case .inviteeAwaitingDecision(let peer, let peerFields) = step else { return nil }
        let established = EstablishedState(peer: peer, settings: settings, isInviter: false, peerFields: peerFields)
        let accept = Frame.accept(HandshakeFields(acceptingMessagesUpTo: maximumMessageLength))
        return (established, .establish(peer, sending: accept, finishingHandshake: false))
    }

    /// The session accepted the RESUME: the machine moves to established.
    ///
    /// - Parameter nextExpected: sent in RESUMED.
    /// - Returns: `nil` when no RESUME is pending.
    func acceptResume(nextExpected: UInt64, _ settings: ConnectionSettings) -> Accepted? {
        guard case .inviteeAwaitingResumeDecision(let peer, let peerExpects) = step else { return nil }
        let established = EstablishedState(peer: peer, settings: settings, isInviter: false)
        let action = Action.establishResumed(
            peer,
            peerExpects: peerExpects,
            sending: .resumed(nextExpected: nextExpected),
            finishingHandshake: false
        )
        return (established, action)
    }

    /// The application or the session turned the invitation or RESUME away.
    ///
    /// - Parameter reason: sent in DECLINE.
    /// - Returns: `nil` when nothing is pending.
    func decline(_ reason: DisconnectReason) -> Transition? {
        switch step {
        case .inviteeAwaitingDecision(let peer, _), .inviteeAwaitingResumeDecision(let peer, _):
            return .close(reason, sending: .decline(reason), peer: peer)
        default:
            return nil
        }
    }

    /// The deadline passed: the inviter's invitation timeout, the invitee's handshake timeout, or the
    /// wait for the application's (or the session's) answer.
    func deadlinePassed() -> Transition {
        switch step {
        case .inviterAwaitingHello(let invitation, _) where invitation.resume != nil:
            // A resume still securing its connection: closed quietly, as resumerAwaitingAnswer below.
            return .quietly(.timedOut, peer: nil)
        case .inviterAwaitingHello, .inviterAwaitingAnswer:
            return .goodbye(.timedOut, peer: peer)
        case .resumerAwaitingHello, .resumerAwaitingAnswer:
            // Without GOODBYE: had the peer already resumed the link on its side, a GOODBYE would end the
            // link there; a closed socket is a drop it resumes again from.
            return .quietly(.timedOut, peer: peer)
        case .inviteeAwaitingHello, .inviteeAwaitingInvite:
            return .goodbye(.handshakeTimeout, peer: peer)
        case .inviteeAwaitingDecision(let peer, _), .inviteeAwaitingResumeDecision(let peer, _):
            return .close(.timedOut, sending: .decline(.timedOut), peer: peer)
        case .idle:
            return .stay(.none)
        }
    }

    /// How an unexpected-frame error names this step.
    private var stateWords: String {
        switch step {
        case .idle: return "not yet connected"
        case .inviterAwaitingHello, .inviteeAwaitingHello, .resumerAwaitingHello: return "waiting for HELLO"
        case .inviterAwaitingAnswer: return "waiting for the answer to the invitation"
        case .inviteeAwaitingInvite: return "waiting for INVITE"
        case .resumerAwaitingAnswer: return "waiting for the answer to RESUME"
        case .inviteeAwaitingResumeDecision: return "the resume is not accepted yet"
        case .inviteeAwaitingDecision: return "the invitation is not accepted yet"
        }
    }
}
