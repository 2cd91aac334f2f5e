extension ConnectionStateMachine {
    /// The TCP connection is up: HELLO goes out (with INVITE or RESUME from a plain inviter) and the
    /// handshake deadline of this side's role starts.
    package mutating func channelActive() -> Action {
        guard case .handshake(var handshake) = state else { return .none }
        let action = handshake.channelActive(settings)
        state = .handshake(handshake)
        return action
    }

    /// A frame arrived from the peer.
    ///
    /// - Parameter frame: the decoded frame.
    /// - Returns: what to do with it.
    package mutating func frameReceived(_ frame: Frame) -> Action {
        ticksSinceIncoming = 0
        // A message changes nothing: answered without taking the established state out and putting it
        // back, which copies it (the most a message cost the machine).
        if case .data(let payload) = frame, case .established(let established) = state {
            return established.messageReceived(payload)
        }
        switch state {
        case .established(var established):
            // Out of `state` while it changes: the channel table is then not copied on write.
            state = .modifying
            let action = established.frameReceived(frame, isEncrypted: isEncrypted)
            settle(established, after: action)
            return action
        case .securing(var securing):
            let transition = securing.frameReceived(frame, settings)
            return apply(transition, staying: .securing(securing))
        case .handshake(var handshake):
            let transition = handshake.frameReceived(frame, settings)
            return apply(transition, staying: .handshake(handshake))
        case .closing, .closed, .modifying:
            return .none
        }
    }

    /// Puts an established state back after an event, or moves to closing when the event closes.
    mutating func settle(_ established: EstablishedState, after action: Action) {
        guard case .close(let reason, _) = action else {
            state = .established(established)
            return
        }
        state = .closing(
            ClosingState(peer: established.peer, reason: reason, handshakeFinished: true, wasEstablished: true)
        )
    }

    /// Carries out a transition of the handshake or of securing.
    ///
    /// - Parameters:
    ///   - transition: what the event does.
    ///   - staying: the state as the event left it, kept when the transition stays.
    /// - Returns: the action for the handler.
    mutating func apply(_ transition: Transition, staying: State) -> Action {
        switch transition {
        case .stay(let action):
            state = staying
            return action
        case .move(let next, let action):
            if case .securing = next { isEncrypted = true }
            state = next
            return action
        case .close(let reason, let frame, let peer):
            state = .closing(
                ClosingState(
                    peer: peer,
                    reason: reason,
                    handshakeFinished: handshakeFinished,
                    wasEstablished: wasEstablished
                )
            )
            return .close(reason, sending: frame)
        }
    }
}
