import NIOCore

extension ConnectionStateMachine {
    /// TLS is up and the peer's certificate proves the PeerID it claimed: start the pairing exchange.
    ///
    /// - Parameter pairing: the exchange, with both keys and this side's nonce.
    /// - Returns: the invitee's PAIR-COMMIT to send; nothing for the inviter, which waits for it.
    package mutating func secured(_ pairing: PairingExchange) -> Action {
        guard case .securing(var securing) = state else { return .none }
        let action = securing.secured(pairing)
        state = .securing(securing)
        return action
    }

    /// The certificate decision answered.
    ///
    /// - Parameter rejection: `nil` when the peer is accepted; else why it is refused (sent in GOODBYE).
    /// - Returns: the inviter's INVITE, the invitee's invitation if it already came, or the close.
    package mutating func certificateDecided(_ rejection: DisconnectReason?) -> Action {
        guard case .securing(let securing) = state, let decided = securing.certificateDecided(rejection) else {
            return .none
        }
        let action = apply(decided.transition, staying: state)
        // An INVITE or RESUME that came while this side decided is handled as if it came now.
        guard let pending = decided.pending else { return action }
        return frameReceived(pending)
    }

    /// The application accepted the invitation.
    ///
    /// - Parameters:
    ///   - keepaliveInterval: the session's keepalive interval, which now applies.
    ///   - livenessTimeout: the session's liveness timeout, which now applies.
    ///   - maximumMessageLength: the largest message the session accepts, sent in ACCEPT.
    /// - Returns: the action, or `nil` when no invitation is pending any more (it expired or was withdrawn).
    package mutating func accept(
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int = WireProtocol.defaultMaximumMessageLength
    ) -> Action? {
        guard case .handshake(let handshake) = state,
            let accepted = handshake.accept(maximumMessageLength: maximumMessageLength, settings)
        else { return nil }
        establish(accepted.state, keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
        return accepted.action
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
        guard case .handshake(let handshake) = state,
            let accepted = handshake.acceptResume(nextExpected: nextExpected, settings)
        else { return nil }
        establish(accepted.state, keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
        return accepted.action
    }

    /// The application declined the invitation, or the invitee turned it away (busy, session full),
    /// or the session refused a RESUME.
    ///
    /// - Parameter reason: sent to the inviter in DECLINE.
    /// - Returns: the action, or `nil` when no invitation is pending any more.
    package mutating func decline(_ reason: DisconnectReason) -> Action? {
        guard case .handshake(let handshake) = state, let transition = handshake.decline(reason) else { return nil }
        return apply(transition, staying: state)
    }

    /// The handshake deadline passed: the inviter's invitation timeout, the invitee's handshake
    /// timeout, or the invitee's wait for the application's answer. Stale deadlines are ignored.
    package mutating func deadlinePassed() -> Action {
        switch state {
        case .handshake(let handshake): return apply(handshake.deadlinePassed(), staying: state)
        case .securing(let securing): return apply(securing.deadlinePassed(), staying: state)
        case .established, .closing, .closed, .modifying: return .none
        }
    }

    /// The invitee's answer is in: the session's keepalive settings apply from now on.
    private mutating func establish(
        _ established: EstablishedState,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount
    ) {
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
        ticksSinceIncoming = 0
        state = .established(established)
    }
}
