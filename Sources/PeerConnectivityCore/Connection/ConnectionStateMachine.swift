import NIOCore

/// The life of one connection between two peers, from HELLO to GOODBYE, as a pure value.
///
/// The channel handler feeds it events (frames received, timers, local decisions) and carries out
/// the ``Action`` each returns; the machine never touches a channel, so it is tested with plain
/// values. It decides everything the handler does: which deadline applies, when those waiting for
/// the handshake are told, whose channel a RESET names. Until the invitation is accepted only
/// handshake frames are allowed: anything else closes the connection with a protocol violation.
///
/// Its states, each a struct of its own that takes the events of that state:
/// ```
/// handshake (HandshakeState) --HELLOs, both allow encryption--> securing (SecuringState) --verdict--> handshake
/// handshake --ACCEPT / RESUMED / accept() / acceptResume()--> established (EstablishedState)
/// any state --GOODBYE / error / timer / close()--> closing (ClosingState) --channelInactive--> closed(reason)
/// ```
package struct ConnectionStateMachine {
    /// Where the connection is.
    enum State {
        /// HELLO, then INVITE or RESUME and the answer to it (in the clear, or inside TLS once secured).
        case handshake(HandshakeState)
        /// TLS, the pairing exchange and the certificate decision.
        case securing(SecuringState)
        /// Connected.
        case established(EstablishedState)
        /// Closing: the channel has not closed yet.
        case closing(ClosingState)
        /// The channel has closed; the reason was reported.
        case closed(DisconnectReason)
        /// Only while an established state is changed in place, so that its channel table is not copied.
        case modifying
    }

    var state: State
    let settings: ConnectionSettings
    /// Whether this side invites (an inviter or a resumer): it opens odd channels and is the TLS client.
    package let isInviter: Bool
    /// How often a KEEPALIVE is sent once established.
    package internal(set) var keepaliveInterval: TimeAmount
    var livenessTimeout: TimeAmount
    /// Keepalive ticks since anything arrived from the peer (ticks while reading is paused by us do not count).
    var ticksSinceIncoming = 0
    /// Whether the owner stopped reading from the socket (receive backpressure).
    package internal(set) var isReadingPaused = false
    /// Whether the connection switched to TLS.
    package internal(set) var isEncrypted = false

    /// The default longest wait for the application's answer: 2 minutes (an INVITE may ask for 49 days).
    package static let defaultMaximumInvitationTimeout = TimeAmount.minutes(2)

    /// The default wait for the inviter's part of the handshake: 10 seconds.
    package static let defaultHandshakeTimeout = TimeAmount.seconds(10)

    /// Makes the machine for a new connection.
    ///
    /// - Parameters:
    ///   - localPeer: this side's identity, sent in HELLO.
    ///   - role: inviter (with what it sends) or invitee.
    ///   - keepaliveInterval: how often a KEEPALIVE is sent once established.
    ///   - livenessTimeout: how long without any frame from the peer before it counts as gone.
    ///   - handshakeTimeout: how long an invitee waits for the inviter's part of the handshake, and for
    ///     the session's answer to a RESUME.
    ///   - certificateDecisionTimeout: how long an invitee waits for the certificate decision; `nil` when
    ///     no decision is asked (the peer is accepted at once).
    ///   - maximumIncomingChannels: how many channels (streams and resources) the peer may have open at once.
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
        handshakeTimeout: TimeAmount = Self.defaultHandshakeTimeout,
        certificateDecisionTimeout: TimeAmount? = nil,
        maximumIncomingChannels: Int = 256,
        maximumInvitationTimeout: TimeAmount = Self.defaultMaximumInvitationTimeout,
        encryption: EncryptionPreference = .none,
        encryptedBefore: @escaping @Sendable (PeerID) -> Bool = { _ in false }
    ) {
        self.settings = ConnectionSettings(
            localPeer: localPeer,
            encryption: encryption,
            encryptedBefore: encryptedBefore,
            maximumIncomingChannels: maximumIncomingChannels,
            maximumInvitationTimeout: maximumInvitationTimeout,
            handshakeTimeout: handshakeTimeout,
            certificateDecisionTimeout: certificateDecisionTimeout
        )
        self.state = .handshake(HandshakeState(step: .idle(role)))
        switch role {
        case .inviter, .resumer: self.isInviter = true
        case .invitee: self.isInviter = false
        }
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
    }

    // MARK: - What the machine knows

    /// The peer on the other side, once its HELLO has arrived.
    package var peer: PeerID? {
        switch state {
        case .handshake(let handshake): return handshake.peer
        case .securing(let securing): return securing.peer
        case .established(let established): return established.peer
        case .closing(let closing): return closing.peer
        case .closed, .modifying: return nil
        }
    }

    /// What the peer said of itself in its INVITE or ACCEPT (the largest message it accepts, whether it
    /// reads folder channels), once established; `nil` before, and on a connection that resumed a link.
    package var peerFields: HandshakeFields? {
        guard case .established(let established) = state else { return nil }
        return established.peerFields
    }

    /// Whether the peer is sending resources or folders now (a channel of either kind is open): their
    /// bytes wait for the file queue in the reads they came in. False before the connection is
    /// established and once it closes.
    package var receivesBlocks: Bool {
        guard case .established(let established) = state else { return false }
        return established.channels.inboundBlockChannels > 0
    }

    /// Whether the handshake has completed and the connection is not closing.
    package var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// Why the connection is closing or has closed, once it is.
    package var closeReason: DisconnectReason? {
        switch state {
        case .closing(let closing): return closing.reason
        case .closed(let reason): return reason
        default: return nil
        }
    }

    /// Whether the connection is closing or closed.
    package var isClosing: Bool {
        switch state {
        case .closing, .closed: return true
        default: return false
        }
    }

    /// Whether the connection was established before it began to close (a TLS error then is a lost
    /// connection, not a failed TLS handshake).
    package var wasEstablished: Bool {
        switch state {
        case .established: return true
        case .closing(let closing): return closing.wasEstablished
        case .handshake, .securing, .closed, .modifying: return false
        }
    }

    /// The first channel number this side opens; each next one is 2 more.
    package var firstLocalChannel: UInt32 {
        ChannelTable.firstLocalChannel(localIsInviter: isInviter)
    }

    /// Whether those waiting for the handshake have been told it finished.
    var handshakeFinished: Bool {
        switch state {
        case .handshake(let handshake): return handshake.peerPartFinished
        case .securing: return false
        case .established, .closed, .modifying: return true
        case .closing(let closing): return closing.handshakeFinished
        }
    }
}
