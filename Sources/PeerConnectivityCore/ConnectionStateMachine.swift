import NIOCore

/// The life of one connection between two peers, from HELLO to GOODBYE, as a pure value.
///
/// The channel handler feeds it events (frames received, timers, local decisions) and carries out
/// the ``Action`` each returns; the machine never touches a channel, so it is tested with plain
/// values. Until the invitation is accepted only handshake frames are allowed: anything else
/// closes the connection with a protocol violation.
///
/// ```
/// inviter: awaitingHello --HELLO--> awaitingAnswer --ACCEPT--> established
/// invitee: awaitingHello --HELLO--> awaitingInvite --INVITE--> awaitingDecision --accept()--> established
/// resumer: awaitingHello --HELLO--> awaitingAnswer --RESUMED--> established (resumed)
/// invitee: awaitingHello --HELLO--> awaitingInvite --RESUME--> awaitingResumeDecision --acceptResume()--> established
/// any state --GOODBYE / error / timer / close()--> closing --channelInactive--> closed
///
/// when both HELLOs allow encryption, between HELLO and the invitation (all inside TLS):
/// inviter: --HELLO--> securing --secured()--> awaitingCommitment --PAIR-COMMIT (send PAIR-NONCE)-->
///          awaitingNonce --PAIR-NONCE--> awaitingVerdict --certificateDecided(nil) (send INVITE)--> awaitingAnswer
/// invitee: --HELLO--> securing --secured() (send PAIR-COMMIT)--> awaitingNonce --PAIR-NONCE (send PAIR-NONCE)-->
///          awaitingVerdict --certificateDecided(nil)--> awaitingInvite (or awaitingDecision if INVITE came)
/// ```
package struct ConnectionStateMachine {
    /// Which side of the invitation this connection is.
    package enum Role: Sendable {
        /// This side connected and invites the peer.
        case inviter(Invitation)
        /// This side accepted the TCP connection and waits to be invited.
        case invitee
        /// This side connected to re-establish a link that dropped (RESUME instead of INVITE).
        case resumer(Resumption)
    }

    /// What a resumer sends and expects.
    package struct Resumption: Sendable {
        /// The peer of the link that dropped.
        package var expectedPeer: PeerID
        /// The secret that peer gave this side (RESUME-SECRET).
        package var secret: [UInt8]
        /// How many reliable messages this side has received from the peer on the link.
        package var nextExpected: UInt64
        /// How long to wait for the answer.
        package var timeout: TimeAmount

        package init(expectedPeer: PeerID, secret: [UInt8], nextExpected: UInt64, timeout: TimeAmount) {
            self.expectedPeer = expectedPeer
            self.secret = secret
            self.nextExpected = nextExpected
            self.timeout = timeout
        }
    }

    /// What an inviter sends and expects.
    package struct Invitation: Sendable {
        /// The peer this side means to reach, when known from discovery; `nil` for a direct connection.
        package var expectedPeer: PeerID?
        /// Application data sent with the invitation.
        package var context: ByteBuffer
        /// How long to wait for the answer.
        package var timeout: TimeAmount
        /// Set when the connection resumes a dropped link (``Role/resumer(_:)`` on an encrypted
        /// connection): RESUME goes where INVITE would, once the connection is secured.
        package var resume: Frame.Resume?

        package init(expectedPeer: PeerID?, context: ByteBuffer, timeout: TimeAmount) {
            self.expectedPeer = expectedPeer
            self.context = context
            self.timeout = timeout
        }
    }

    /// What the handler must do after an event.
    package enum Action: Equatable {
        /// Nothing.
        case none
        /// Write these frames and flush.
        case send([Frame])
        /// The inviter learned who answered (from its HELLO, verified by TLS when encrypted): write
        /// `frames` (the INVITE, unless it went with HELLO) and tell the owner.
        case peerIdentified(PeerID, sending: [Frame] = [])
        /// Both sides allow encryption: switch the stream to TLS (the inviter is the client), then
        /// check the peer's certificate against its HELLO and call ``secured(_:)``.
        case startTLS(asClient: Bool)
        /// The pairing code is known: write `frames`, then ask the certificate decision about the
        /// peer and call ``certificateDecided(_:)`` with its verdict.
        case decideCertificate(PeerID, pairingCode: String, sending: [Frame])
        /// An invitation arrived: hand it to the application, and wait for its answer until `timeout`.
        case deliverInvitation(from: PeerID, context: ByteBuffer, timeout: TimeAmount)
        /// The handshake is done: write `frame` if any, tell the owner, start the keepalive timer.
        case establish(PeerID, sending: Frame?)
        /// A resumer asks to re-establish its link (RESUME): hand it to the owner, which answers with
        /// ``ConnectionStateMachine/acceptResume(nextExpected:keepaliveInterval:livenessTimeout:)`` or declines.
        case deliverResume(from: PeerID, secret: [UInt8], peerExpects: UInt64)
        /// A link was re-established: write `frame` if any, tell the owner (with how many of this side's
        /// reliable messages the peer has), start the keepalive timer.
        case establishResumed(PeerID, peerExpects: UInt64, sending: Frame?)
        /// The peer's resume secret for this link (RESUME-SECRET).
        case deliverResumeSecret([UInt8])
        /// The peer acknowledged this many reliable messages on the link (ACK).
        case deliverAck(UInt64)
        /// Hand an application message to the owner.
        case deliverData(ByteBuffer)
        /// The peer said where it receives unreliable messages.
        case deliverDatagramEndpoint(port: UInt16, token: UInt64)
        /// The peer sent the key to seal datagrams to it with (encrypted connections only).
        case deliverDatagramKey([UInt8])
        /// The peer told this side about its session: its listener, or other members (mesh).
        case deliverMembership(Frame)
        /// Something happened on a channel (a stream or a resource): hand it to the owner.
        case channel(ChannelTable.Action)
        /// Write `frame` if any, then close the channel. `reason` is reported when it has closed.
        case close(DisconnectReason, sending: Frame?)
        /// The channel has closed: tell the owner, once.
        case reportClosed(peer: PeerID?, reason: DisconnectReason)
    }

    private enum State {
        case idle(Role)
        case inviterAwaitingHello(Invitation, inviteSent: Bool)
        /// TLS handshake under way; the invitation is the inviter's.
        case securing(PeerID, Invitation?)
        case inviterAwaitingCommitment(PeerID, Invitation, PairingExchange)
        case inviterAwaitingNonce(PeerID, Invitation, PairingExchange, commitment: [UInt8])
        case inviteeAwaitingNonce(PeerID, PairingExchange)
        /// The certificate decision is asked; an INVITE that arrives meanwhile waits here.
        case awaitingVerdict(PeerID, Invitation?, pendingInvite: Frame?)
        case inviterAwaitingAnswer(PeerID)
        case inviteeAwaitingHello
        case inviteeAwaitingInvite(PeerID)
        case inviteeAwaitingDecision(PeerID)
        case resumerAwaitingHello(Resumption)
        case resumerAwaitingAnswer(PeerID)
        case inviteeAwaitingResumeDecision(PeerID)
        case established(PeerID)
        case closing(peer: PeerID?, reason: DisconnectReason)
        case closed
    }

    private var state: State
    private let localPeer: PeerID
    private let encryption: EncryptionPreference
    /// Whether this side has seen a peer encrypted before (its key is pinned): such a peer is never
    /// accepted in the clear, whatever either preference says.
    private let encryptedBefore: @Sendable (PeerID) -> Bool
    private let isInviter: Bool
    /// The channels; set up when the connection is established.
    private var channels: ChannelTable
    private var keepaliveInterval: TimeAmount
    private var livenessTimeout: TimeAmount
    /// Keepalive ticks since anything arrived from the peer (ticks while reading is paused by us do not count).
    private var ticksSinceInbound = 0
    private var readingPaused = false
    /// The count a pending RESUME carried, until the session answers it.
    private var pendingResumeCount: UInt64?
    /// The longest an invitee lets an invitation wait for the application, whatever the INVITE asks.
    private let maximumInvitationTimeout: TimeAmount

    /// The default longest wait for the application's answer: 2 minutes (an INVITE may ask for 49 days).
    package static let defaultMaximumInvitationTimeout = TimeAmount.minutes(2)

    /// Makes the machine for a new connection.
    ///
    /// - Parameters:
    ///   - localPeer: this side's identity, sent in HELLO.
    ///   - role: inviter (with what it sends) or invitee.
    ///   - keepaliveInterval: how often a KEEPALIVE is sent once established.
    ///   - livenessTimeout: how long without any frame from the peer before it counts as gone.
    ///   - maximumInboundChannels: how many channels (streams and resources) the peer may have open at once.
    ///   - maximumInvitationTimeout: an invitee holds an invitation for the application at most this
    ///     long, even when the INVITE asks for longer.
    ///   - encryption: this side's encryption preference, sent in HELLO.
    ///   - encryptedBefore: whether this side has seen a peer encrypted before (its key is pinned): a
    ///     plain connection with such a peer closes with ``DisconnectReason/downgradeRefused``.
    package init(
        localPeer: PeerID,
        role: Role,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumInboundChannels: Int = 256,
        maximumInvitationTimeout: TimeAmount = Self.defaultMaximumInvitationTimeout,
        encryption: EncryptionPreference = .none,
        encryptedBefore: @escaping @Sendable (PeerID) -> Bool = { _ in false }
    ) {
        self.maximumInvitationTimeout = maximumInvitationTimeout
        self.localPeer = localPeer
        self.encryption = encryption
        self.encryptedBefore = encryptedBefore
        self.state = .idle(role)
        switch role {
        case .inviter, .resumer: self.isInviter = true
        case .invitee: self.isInviter = false
        }
        self.channels = ChannelTable(localIsInviter: isInviter, maximumInboundChannels: maximumInboundChannels)
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
    }

    /// The peer on the other side, once its HELLO has arrived.
    package var peer: PeerID? {
        switch state {
        case .idle, .inviterAwaitingHello, .inviteeAwaitingHello, .resumerAwaitingHello, .closed: return nil
        case .inviterAwaitingAnswer(let peer), .inviteeAwaitingInvite(let peer), .inviteeAwaitingDecision(let peer),
            .resumerAwaitingAnswer(let peer), .inviteeAwaitingResumeDecision(let peer), .established(let peer),
            .securing(let peer, _), .inviterAwaitingCommitment(let peer, _, _),
            .inviterAwaitingNonce(let peer, _, _, _), .inviteeAwaitingNonce(let peer, _),
            .awaitingVerdict(let peer, _, _):
            return peer
        case .closing(let peer, _): return peer
        }
    }

    /// Whether the handshake has completed and the connection is not closing.
    package var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Why the connection is closing, once it is (the reason reported when it has closed).
    package var closingReason: DisconnectReason? {
        if case .closing(_, let reason) = state { return reason }
        return nil
    }

    /// Whether the connection is closing or closed.
    package var isClosing: Bool {
        switch state {
        case .closing, .closed: return true
        default: return false
        }
    }

    /// Whether the connection switched to TLS.
    package private(set) var isEncrypted = false

    /// The TCP connection is up: the inviter sends HELLO and INVITE at once (INVITE only after the
    /// invitee's HELLO when it may encrypt: the INVITE then goes inside TLS), the invitee its HELLO.
    package mutating func channelActive() -> Action {
        guard case .idle(let role) = state else { return .none }
        let hello = Frame.hello(Frame.Hello(peer: localPeer, encryption: encryption))
        switch role {
        case .inviter(let invitation):
            if encryption != .none {
                state = .inviterAwaitingHello(invitation, inviteSent: false)
                return .send([hello])
            }
            state = .inviterAwaitingHello(invitation, inviteSent: true)
            return .send([hello, Self.inviteFrame(invitation)])
        case .invitee:
            state = .inviteeAwaitingHello
            return .send([hello])
        case .resumer(let resumption):
            let resume = Frame.Resume(
                peer: localPeer.id,
                secret: resumption.secret,
                nextExpected: resumption.nextExpected
            )
            if encryption != .none {
                // RESUME goes where INVITE would, after TLS and the pairing exchange when both allow them.
                var opening = Invitation(
                    expectedPeer: resumption.expectedPeer,
                    context: ByteBuffer(),
                    timeout: resumption.timeout
                )
                opening.resume = resume
                state = .inviterAwaitingHello(opening, inviteSent: false)
                return .send([hello])
            }
            state = .resumerAwaitingHello(resumption)
            return .send([hello, .resume(resume)])
        }
    }

    /// A frame arrived from the peer.
    ///
    /// - Parameter frame: the decoded frame.
    /// - Returns: what to do with it.
    package mutating func frameReceived(_ frame: Frame) -> Action {
        ticksSinceInbound = 0
        // Three switches, not one over (state, frame): the compiler cannot check one that large.
        switch state {
        case .established(let peer):
            return establishedFrameReceived(frame, from: peer)
        case .securing, .inviterAwaitingCommitment, .inviterAwaitingNonce, .inviteeAwaitingNonce, .awaitingVerdict:
            return securingFrameReceived(frame)
        default:
            return handshakeFrameReceived(frame)
        }
    }

    /// A frame on an established connection.
    private mutating func establishedFrameReceived(_ frame: Frame, from peer: PeerID) -> Action {
        switch frame {
        case .data(let payload):
            return .deliverData(payload)
        case .keepalive:
            return .none
        case .datagramEndpoint(let port, let token):
            return .deliverDatagramEndpoint(port: port, token: token)
        case .datagramKey(let key):
            guard isEncrypted else {
                return protocolViolation(.unexpectedFrame(.datagramKey, state: "connected"))
            }
            return .deliverDatagramKey(key)
        case .sessionListener, .members:
            return .deliverMembership(frame)
        case .resumeSecret(let secret):
            return .deliverResumeSecret(secret)
        case .ack(let count):
            return .deliverAck(count)
        case .open, .chunk, .end, .reset,
            .credit, .done:
            switch channels.frameReceived(frame) {
            case .violation(let error): return protocolViolation(error)
            case .refuse(let channel): return .send([.reset(channel: channel, .refused)])
            case .none: return .none
            case let action: return .channel(action)
            }
        case .goodbye(let said):
            // A duplicate connection keeps its reason: the session waits for the one that replaces it.
            if said == .duplicate { return closeQuietly(peer: peer, said) }
            // The peer heard nothing from this side for its liveness timeout: the link failed, nobody left
            // (so reconnection resumes it).
            if said == .livenessTimeout {
                let detail = "the peer heard nothing from this side within its liveness timeout"
                return closeQuietly(peer: peer, DisconnectReason.livenessTimeout.with(detail: detail))
            }
            return closeQuietly(peer: peer, DisconnectReason.peerDisconnected.with(detail: "peer said: \(said)"))

        default:
            return protocolViolation(.unexpectedFrame(frame.type, state: "connected"))
        }
    }

    /// A frame while TLS and the pairing exchange secure the connection.
    private mutating func securingFrameReceived(_ frame: Frame) -> Action {
        switch (state, frame) {
        case (.inviterAwaitingCommitment(let peer, let invitation, let pairing), .pairCommit(let commitment)):
            state = .inviterAwaitingNonce(peer, invitation, pairing, commitment: commitment)
            return .send([.pairNonce(pairing.localNonce)])
        case (.inviterAwaitingNonce(let peer, let invitation, let pairing, let commitment), .pairNonce(let nonce)):
            guard pairing.verify(commitment: commitment, inviteeNonce: nonce) else {
                let reason = DisconnectReason.pairingFailed.with(
                    detail: "the invitee's nonce does not match its commitment"
                )
                return closeWithGoodbye(reason, peer: peer)
            }
            state = .awaitingVerdict(peer, invitation, pendingInvite: nil)
            return .decideCertificate(peer, pairingCode: pairing.code(peerNonce: nonce), sending: [])
        case (.inviteeAwaitingNonce(let peer, let pairing), .pairNonce(let nonce)):
            state = .awaitingVerdict(peer, nil, pendingInvite: nil)
            return .decideCertificate(
                peer,
                pairingCode: pairing.code(peerNonce: nonce),
                sending: [.pairNonce(pairing.localNonce)]
            )
        case (.awaitingVerdict(let peer, .none, pendingInvite: .none), .invite),
            (.awaitingVerdict(let peer, .none, pendingInvite: .none), .resume):
            // The inviter decided first; its INVITE (or RESUME) waits for this side's decision.
            state = .awaitingVerdict(peer, nil, pendingInvite: frame)
            return .none

        case (.securing(let peer, _), .goodbye(let said)),
            (.inviterAwaitingCommitment(let peer, _, _), .goodbye(let said)),
            (.inviterAwaitingNonce(let peer, _, _, _), .goodbye(let said)),
            (.inviteeAwaitingNonce(let peer, _), .goodbye(let said)),
            (.awaitingVerdict(let peer, _, _), .goodbye(let said)):
            return closeQuietly(peer: peer, remote(said))
        case (.securing, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "securing the connection with TLS"))
        case (.inviterAwaitingCommitment, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for PAIR-COMMIT"))
        case (.inviterAwaitingNonce, _), (.inviteeAwaitingNonce, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for PAIR-NONCE"))
        case (.awaitingVerdict, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "deciding on the peer's certificate"))
        default:
            return .none  // not a securing state: frameReceived sends none here
        }
    }

    /// Why a plain connection with `peer` is refused: this side has seen it encrypted before.
    private func downgradeRefusal(for peer: PeerID) -> DisconnectReason? {
        guard encryptedBefore(peer) else { return nil }
        return .downgradeRefused.with(
            detail: "\(peer) was seen encrypted before (its key is pinned) and the HELLOs now say plain: "
                + "someone on the path may have changed a HELLO"
        )
    }

    /// A frame during the plain part of the handshake (HELLO, INVITE or RESUME, and their answers).
    private mutating func handshakeFrameReceived(_ frame: Frame) -> Action {
        switch (state, frame) {
        case (.inviterAwaitingHello(let invitation, let inviteSent), .hello(let hello)):
            if hello.peer == localPeer {
                return closeWithGoodbye(.unexpectedPeer.with(detail: "connected to itself"), peer: hello.peer)
            }
            if let expected = invitation.expectedPeer, expected != hello.peer {
                let detail = "expected \(expected), \(hello.peer) answered"
                return closeWithGoodbye(.unexpectedPeer.with(detail: detail), peer: hello.peer)
            }
            switch encryption.negotiate(with: hello.encryption) {
            case .refused(let detail):
                return closeWithGoodbye(.encryptionRequired.with(detail: detail), peer: hello.peer)
            case .encrypted:
                state = .securing(hello.peer, invitation)
                isEncrypted = true
                return .startTLS(asClient: true)
            case .plain:
                if let refusal = downgradeRefusal(for: hello.peer) {
                    return closeWithGoodbye(refusal, peer: hello.peer)
                }
                state = Self.awaitingAnswer(to: invitation, from: hello.peer)
                return .peerIdentified(hello.peer, sending: inviteSent ? [] : [Self.openingFrame(invitation)])
            }
        case (.inviterAwaitingAnswer(let peer), .accept):
            state = .established(peer)
            return .establish(peer, sending: nil)
        case (.inviterAwaitingAnswer(let peer), .decline(let reason)):
            return closeQuietly(peer: peer, reason == .localDisconnect ? .declined : reason)

        case (.resumerAwaitingHello(let resumption), .hello(let hello)):
            guard hello.peer == resumption.expectedPeer else {
                let detail = "resuming \(resumption.expectedPeer), \(hello.peer) answered"
                return closeWithGoodbye(.unexpectedPeer.with(detail: detail), peer: hello.peer)
            }
            // This side sent RESUME in the clear (its preference is none); refuse to go on with a peer
            // it has seen encrypted.
            if let refusal = downgradeRefusal(for: hello.peer) {
                return closeWithGoodbye(refusal, peer: hello.peer)
            }
            state = .resumerAwaitingAnswer(hello.peer)
            return .peerIdentified(hello.peer)
        case (.resumerAwaitingAnswer(let peer), .resumed(let peerExpects)):
            state = .established(peer)
            return .establishResumed(peer, peerExpects: peerExpects, sending: nil)
        case (.resumerAwaitingAnswer(let peer), .decline(let reason)):
            return closeQuietly(peer: peer, reason == .localDisconnect ? .resumeRefused : reason)
        case (.inviteeAwaitingInvite(let peer), .resume(let resume)):
            guard resume.peer == peer.id else {
                return protocolViolation(.malformed(.resume, "RESUME names \(resume.peer), HELLO named \(peer.id)"))
            }
            state = .inviteeAwaitingResumeDecision(peer)
            pendingResumeCount = resume.nextExpected
            return .deliverResume(from: peer, secret: resume.secret, peerExpects: resume.nextExpected)

        case (.inviteeAwaitingHello, .hello(let hello)):
            if hello.peer == localPeer {
                return closeWithGoodbye(.unexpectedPeer.with(detail: "connected to itself"), peer: hello.peer)
            }
            switch encryption.negotiate(with: hello.encryption) {
            case .refused(let detail):
                return closeWithGoodbye(.encryptionRequired.with(detail: detail), peer: hello.peer)
            case .encrypted:
                state = .securing(hello.peer, nil)
                isEncrypted = true
                return .startTLS(asClient: false)
            case .plain:
                if let refusal = downgradeRefusal(for: hello.peer) {
                    return closeWithGoodbye(refusal, peer: hello.peer)
                }
                state = .inviteeAwaitingInvite(hello.peer)
                return .none
            }

        case (.inviteeAwaitingInvite(let peer), .invite(let invite)):
            state = .inviteeAwaitingDecision(peer)
            let timeout = min(TimeAmount.milliseconds(Int64(invite.timeoutMilliseconds)), maximumInvitationTimeout)
            return .deliverInvitation(from: peer, context: invite.context, timeout: timeout)

        case (.inviterAwaitingHello, .goodbye(let said)), (.inviteeAwaitingHello, .goodbye(let said)),
            (.resumerAwaitingHello, .goodbye(let said)):
            return closeQuietly(peer: nil, remote(said))
        case (.inviterAwaitingAnswer(let peer), .goodbye(let said)),
            (.inviteeAwaitingInvite(let peer), .goodbye(let said)),
            (.inviteeAwaitingDecision(let peer), .goodbye(let said)),
            (.resumerAwaitingAnswer(let peer), .goodbye(let said)),
            (.inviteeAwaitingResumeDecision(let peer), .goodbye(let said)):
            return closeQuietly(peer: peer, remote(said))

        case (.closing, _), (.closed, _):
            return .none
        case (.idle, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "not yet connected"))
        case (.inviterAwaitingHello, _), (.inviteeAwaitingHello, _), (.resumerAwaitingHello, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for HELLO"))
        case (.inviterAwaitingAnswer, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for the answer to the invitation"))
        case (.inviteeAwaitingInvite, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for INVITE"))
        case (.resumerAwaitingAnswer, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "waiting for the answer to RESUME"))
        case (.inviteeAwaitingResumeDecision, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "the resume is not accepted yet"))
        case (.inviteeAwaitingDecision, _):
            return protocolViolation(.unexpectedFrame(frame.type, state: "the invitation is not accepted yet"))
        case (.securing, _), (.inviterAwaitingCommitment, _), (.inviterAwaitingNonce, _), (.inviteeAwaitingNonce, _),
            (.awaitingVerdict, _), (.established, _):
            return .none  // not a handshake state: frameReceived sends none here
        }
    }

    /// TLS is up and the peer's certificate proves the PeerID it claimed: start the pairing exchange.
    ///
    /// - Parameter pairing: the exchange, with both keys and this side's nonce.
    /// - Returns: the invitee's PAIR-COMMIT to send; nothing for the inviter, which waits for it.
    package mutating func secured(_ pairing: PairingExchange) -> Action {
        switch state {
        case .securing(let peer, let invitation?):
            state = .inviterAwaitingCommitment(peer, invitation, pairing)
            return .none
        case .securing(let peer, .none):
            state = .inviteeAwaitingNonce(peer, pairing)
            return .send([.pairCommit(pairing.localCommitment)])
        default:
            return .none
        }
    }

    /// The certificate decision answered.
    ///
    /// - Parameter rejection: `nil` when the peer is accepted; else why it is refused (sent in GOODBYE).
    /// - Returns: the inviter's INVITE, the invitee's invitation if it already came, or the close.
    package mutating func certificateDecided(_ rejection: DisconnectReason?) -> Action {
        guard case .awaitingVerdict(let peer, let invitation, let pendingInvite) = state else { return .none }
        if let rejection {
            return closeWithGoodbye(rejection, peer: peer)
        }
        if let invitation {
            state = Self.awaitingAnswer(to: invitation, from: peer)
            return .peerIdentified(peer, sending: [Self.openingFrame(invitation)])
        }
        state = .inviteeAwaitingInvite(peer)
        // An INVITE or RESUME that came while this side decided is handled as if it came now.
        guard let pending = pendingInvite else { return .none }
        return frameReceived(pending)
    }

    /// The TLS handshake failed, or the peer's certificate does not prove its HELLO: close.
    ///
    /// - Parameters:
    ///   - reason: why, reported locally.
    ///   - tellingPeer: whether a GOODBYE can still go out (TLS is up: the binding failed).
    package mutating func securityFailed(_ reason: DisconnectReason, tellingPeer: Bool) -> Action {
        switch state {
        case .closing, .closed: return .none
        default:
            return tellingPeer ? closeWithGoodbye(reason, peer: peer) : closeQuietly(peer: peer, reason)
        }
    }

    /// The application accepted the invitation.
    ///
    /// - Parameters:
    ///   - keepaliveInterval: the session's keepalive interval, which now applies.
    ///   - livenessTimeout: the session's liveness timeout, which now applies.
    /// - Returns: the action, or `nil` when no invitation is pending any more (it expired or was withdrawn).
    package mutating func accept(keepaliveInterval: TimeAmount, livenessTimeout: TimeAmount) -> Action? {
        guard case .inviteeAwaitingDecision(let peer) = state else { return nil }
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
        state = .established(peer)
        ticksSinceInbound = 0
        return .establish(peer, sending: .accept)
    }

    /// The session accepted a RESUME: the link is re-established on this connection.
    ///
    /// - Parameters:
    ///   - nextExpected: how many reliable messages this side has received from the peer on the link (RESUMED).
    ///   - keepaliveInterval: the session's keepalive interval, which now applies.
    ///   - livenessTimeout: the session's liveness timeout, which now applies.
    /// - Returns: the action, or `nil` when no RESUME is pending any more.
    package mutating func acceptResume(
        nextExpected: UInt64,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount
    ) -> Action? {
        guard case .inviteeAwaitingResumeDecision(let peer) = state, let peerExpects = pendingResumeCount else {
            return nil
        }
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
        state = .established(peer)
        ticksSinceInbound = 0
        return .establishResumed(peer, peerExpects: peerExpects, sending: .resumed(nextExpected: nextExpected))
    }

    /// The application declined the invitation, or the invitee turned it away (busy, session full),
    /// or the session refused a RESUME.
    ///
    /// - Parameter reason: sent to the inviter in DECLINE.
    /// - Returns: the action, or `nil` when no invitation is pending any more.
    package mutating func decline(_ reason: DisconnectReason) -> Action? {
        let peer: PeerID
        switch state {
        case .inviteeAwaitingDecision(let pending), .inviteeAwaitingResumeDecision(let pending): peer = pending
        default: return nil
        }
        state = .closing(peer: peer, reason: reason)
        return .close(reason, sending: .decline(reason))
    }

    /// The handshake deadline passed: the inviter's invitation timeout, the invitee's handshake
    /// timeout, or the invitee's wait for the application's answer. Stale deadlines are ignored.
    package mutating func deadlinePassed() -> Action {
        if opening?.resume != nil {
            // A resume still securing its connection: closed quietly, as resumerAwaitingAnswer below.
            return closeQuietly(peer: peer, .timedOut)
        }
        switch state {
        case .inviterAwaitingHello, .inviterAwaitingAnswer, .inviterAwaitingCommitment, .inviterAwaitingNonce,
            .securing(_, .some), .awaitingVerdict(_, .some, _):
            return closeWithGoodbye(.timedOut, peer: peer)
        case .resumerAwaitingHello, .resumerAwaitingAnswer:
            // Without GOODBYE: had the peer already resumed the link on its side, a GOODBYE would end the
            // link there; a closed socket is a drop it resumes again from.
            return closeQuietly(peer: peer, .timedOut)
        case .awaitingVerdict(let peer, .none, _):
            let reason = DisconnectReason.certificateRejected.with(
                detail: "no decision on \(peer)'s certificate in time"
            )
            return closeWithGoodbye(reason, peer: peer)
        case .inviteeAwaitingHello, .inviteeAwaitingInvite, .securing(_, .none), .inviteeAwaitingNonce:
            return closeWithGoodbye(.handshakeTimeout, peer: peer)
        case .inviteeAwaitingDecision(let peer), .inviteeAwaitingResumeDecision(let peer):
            state = .closing(peer: peer, reason: .timedOut)
            return .close(.timedOut, sending: .decline(.timedOut))
        case .idle, .established, .closing, .closed:
            return .none
        }
    }

    /// The keepalive timer fired: send a KEEPALIVE, or give up on a silent peer.
    package mutating func keepaliveTick() -> Action {
        guard case .established(let peer) = state else { return .none }
        if !readingPaused {
            ticksSinceInbound += 1
        }
        let silence = keepaliveInterval.nanoseconds * Int64(ticksSinceInbound)
        if silence >= livenessTimeout.nanoseconds {
            let seconds = Double(silence) / 1e9
            let reason = DisconnectReason.livenessTimeout.with(detail: "nothing received for \(seconds) s")
            return closeWithGoodbye(reason, peer: peer)
        }
        return .send([.keepalive])
    }

    /// The owner stopped or resumed reading from the socket (receive backpressure); silence while
    /// paused is our doing, not the peer's, so it does not count toward the liveness timeout.
    ///
    /// - Parameter paused: whether reading is paused.
    package mutating func readingPaused(_ paused: Bool) {
        readingPaused = paused
    }

    /// This side's reader consumed bytes of a channel the peer opened: let the peer send as many more.
    ///
    /// - Parameters:
    ///   - increment: bytes consumed.
    ///   - channel: the channel.
    /// - Returns: the CREDIT to send, or nothing when the channel or the connection has ended.
    package mutating func grantCredit(_ increment: Int, on channel: UInt32) -> Action {
        guard case .established = state, let frame = channels.grant(increment, on: channel) else { return .none }
        return .send([frame])
    }

    /// This side ends a channel the peer opened (its reader stopped, or it cannot keep the data, even
    /// after END: a resource whose digest did not match).
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - code: why, sent to the peer.
    /// - Returns: the RESET to send, or nothing when the connection has ended or the peer never opened it.
    package mutating func resetInboundChannel(_ channel: UInt32, _ code: ChannelResetCode) -> Action {
        guard case .established = state, let frame = channels.reset(channel, code) else { return .none }
        return .send([frame])
    }

    /// The first channel number this side opens; each next one is 2 more.
    package var firstLocalChannel: UInt32 {
        ChannelTable.firstLocalChannel(localIsInviter: isInviter)
    }

    /// This side closes the connection (disconnect, stop, or cancelling an invitation).
    ///
    /// - Parameter reason: sent to the peer in GOODBYE and reported locally.
    package mutating func close(_ reason: DisconnectReason) -> Action {
        switch state {
        case .closing, .closed: return .none
        case .idle:
            state = .closing(peer: nil, reason: reason)
            return .close(reason, sending: nil)
        default:
            return closeWithGoodbye(reason, peer: peer)
        }
    }

    /// The decoder or the socket reported an error.
    ///
    /// - Parameter error: a ``ProtocolError`` for bad input; anything else is an I/O failure.
    package mutating func errorCaught(_ error: any Error) -> Action {
        if let protocolError = error as? ProtocolError {
            // Once connected, a connection that ends inside a frame died mid-write (a crash, a cut link):
            // it is lost, not malformed, and so may be resumed (reconnection).
            guard protocolError.isTruncation, case .established(let peer) = state else {
                return protocolViolation(protocolError)
            }
            let reason = DisconnectReason.connectionLost.with(detail: protocolError.description)
            state = .closing(peer: peer, reason: reason)
            return .close(reason, sending: nil)
        }
        switch state {
        case .closing, .closed: return .none
        default:
            let reason = DisconnectReason.connectionLost.with(detail: "\(error)")
            state = .closing(peer: peer, reason: reason)
            return .close(reason, sending: nil)
        }
    }

    /// The channel has closed. Reports the reason once: ours if we closed it, else a lost connection.
    package mutating func channelInactive() -> Action {
        switch state {
        case .closed:
            return .none
        case .closing(let peer, let reason):
            state = .closed
            return .reportClosed(peer: peer, reason: reason)
        case .idle:
            state = .closed
            return .reportClosed(peer: nil, reason: .connectionFailed)
        case .inviterAwaitingHello, .inviterAwaitingAnswer, .inviteeAwaitingHello, .inviteeAwaitingInvite,
            .inviteeAwaitingDecision, .resumerAwaitingHello, .resumerAwaitingAnswer, .inviteeAwaitingResumeDecision,
            .established, .securing, .inviterAwaitingCommitment, .inviterAwaitingNonce, .inviteeAwaitingNonce,
            .awaitingVerdict:
            let peer = self.peer
            state = .closed
            return .reportClosed(
                peer: peer,
                reason: DisconnectReason.connectionLost.with(detail: "closed without GOODBYE")
            )
        }
    }

    // MARK: - Helpers

    /// What an inviter sends once the connection is secured: RESUME for a link being resumed, else INVITE.
    private static func openingFrame(_ invitation: Invitation) -> Frame {
        if let resume = invitation.resume { return .resume(resume) }
        return inviteFrame(invitation)
    }

    /// The state that waits for the answer to ``openingFrame(_:)``.
    private static func awaitingAnswer(to invitation: Invitation, from peer: PeerID) -> State {
        invitation.resume == nil ? .inviterAwaitingAnswer(peer) : .resumerAwaitingAnswer(peer)
    }

    /// The inviter's opening while it is still securing the connection.
    private var opening: Invitation? {
        switch state {
        case .inviterAwaitingHello(let invitation, _), .securing(_, let invitation?),
            .inviterAwaitingCommitment(_, let invitation, _), .inviterAwaitingNonce(_, let invitation, _, _),
            .awaitingVerdict(_, let invitation?, _):
            return invitation
        default:
            return nil
        }
    }

    private static func inviteFrame(_ invitation: Invitation) -> Frame {
        let milliseconds = UInt32(clamping: invitation.timeout.nanoseconds / 1_000_000)
        return .invite(Frame.Invite(timeoutMilliseconds: milliseconds, context: invitation.context))
    }

    private mutating func protocolViolation(_ error: ProtocolError) -> Action {
        switch state {
        case .closing, .closed: return .none
        default:
            let reason = error.disconnectReason
            let peer = self.peer
            state = .closing(peer: peer, reason: reason)
            return .close(reason, sending: .goodbye(reason))
        }
    }

    private mutating func closeWithGoodbye(_ reason: DisconnectReason, peer: PeerID?) -> Action {
        state = .closing(peer: peer, reason: reason)
        return .close(reason, sending: .goodbye(reason))
    }

    private mutating func closeQuietly(peer: PeerID?, _ reason: DisconnectReason) -> Action {
        state = .closing(peer: peer, reason: reason)
        return .close(reason, sending: nil)
    }

    /// What a GOODBYE received during the handshake means here.
    private func remote(_ said: DisconnectReason) -> DisconnectReason {
        said == .localDisconnect ? .peerDisconnected : said
    }
}
