extension ConnectionStateMachine {
    /// This side closes the connection (disconnect, stop, or cancelling an invitation).
    ///
    /// - Parameter reason: sent to the peer in GOODBYE and reported locally.
    package mutating func close(_ reason: DisconnectReason) -> Action {
        switch state {
        case .closing, .closed, .modifying: return .none
        case .handshake(let handshake) where handshake.isIdle:
            return apply(.quietly(reason, peer: nil), staying: state)
        default:
            return apply(.goodbye(reason, peer: peer), staying: state)
        }
    }

    /// Whether a close that sends `frame` lingers once the frame is written: shuts down only its output
    /// (the peer reads the frame, then the end of the stream) and reads on, dropping what comes, until the
    /// peer closes too or a grace period ends. Closing at once with unread input would make the kernel
    /// send a reset and drop what it had not sent yet, the GOODBYE with it, over a real network.
    ///
    /// Only this side's own orderly close lingers (the application's disconnect, a GOODBYE of
    /// ``DisconnectReason/localDisconnect``), and only without TLS, whose close already waits for the
    /// peer's close_notify: a hostile or broken peer is closed at once, holding nothing.
    ///
    /// - Parameters:
    ///   - frame: the frame the close sends, if any.
    ///   - encrypted: whether the connection runs TLS.
    package static func lingers(after frame: Frame?, encrypted: Bool) -> Bool {
        guard !encrypted, case .goodbye(let reason)? = frame else { return false }
        return reason == .localDisconnect
    }

    /// The TLS handshake failed, or the peer's certificate does not prove its HELLO: close.
    ///
    /// - Parameters:
    ///   - reason: why, reported locally.
    ///   - tellingPeer: whether a GOODBYE can still go out (TLS is up: the binding failed).
    package mutating func securityFailed(_ reason: DisconnectReason, tellingPeer: Bool) -> Action {
        switch state {
        case .closing, .closed, .modifying: return .none
        default:
            return apply(tellingPeer ? .goodbye(reason, peer: peer) : .quietly(reason, peer: peer), staying: state)
        }
    }

    /// The TLS layer reported an error: before the connection is established, its handshake failed
    /// (closed quietly with ``DisconnectReason/securityFailed``); after, the connection is lost.
    ///
    /// - Parameter error: TLS's error.
    package mutating func tlsErrorCaught(_ error: any Error) -> Action {
        guard isEncrypted, !wasEstablished else { return errorCaught(error) }
        return securityFailed(.securityFailed.with(detail: "\(error)"), tellingPeer: false)
    }

    /// The decoder or the socket reported an error.
    ///
    /// - Parameter error: a ``ProtocolError`` for bad input; anything else is an I/O failure.
    package mutating func errorCaught(_ error: any Error) -> Action {
        switch state {
        case .closing, .closed, .modifying: return .none
        default: break
        }
        guard let protocolError = error as? ProtocolError else {
            return apply(.quietly(.connectionLost.with(detail: "\(error)"), peer: peer), staying: state)
        }
        // Once connected, a connection that ends inside a frame died mid-write (a crash, a cut link):
        // it is lost, not malformed, and so may be resumed (reconnection).
        if protocolError.isTruncation, isEstablished {
            let reason = DisconnectReason.connectionLost.with(detail: protocolError.description)
            return apply(.quietly(reason, peer: peer), staying: state)
        }
        return apply(.goodbye(protocolError.disconnectReason, peer: peer), staying: state)
    }

    /// The channel has closed. Reports the reason once: ours if we closed it, else a lost connection.
    package mutating func channelInactive() -> Action {
        switch state {
        case .closed, .modifying:
            return .none
        case .closing(let closing):
            state = .closed(closing.reason)
            return closing.closedAction
        case .handshake(let handshake) where handshake.isIdle:
            let closing = ClosingState(
                peer: nil,
                reason: .connectionFailed,
                handshakeFinished: false,
                wasEstablished: false
            )
            return report(closing)
        default:
            let reason = DisconnectReason.connectionLost.with(detail: "closed without GOODBYE")
            let closing = ClosingState(
                peer: peer,
                reason: reason,
                handshakeFinished: handshakeFinished,
                wasEstablished: wasEstablished
            )
            return report(closing)
        }
    }

    /// Moves to closed at once and reports `closing`'s reason.
    private mutating func report(_ closing: ClosingState) -> Action {
        state = .closed(closing.reason)
        return closing.closedAction
    }
}
