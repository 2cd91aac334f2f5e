import PeerConnectivityCore

/// Large messages (channels of kind message) go to a peer one at a time, in the order their sends began
/// (``LargeMessageTurns``): so they arrive in that order, and an honest sender never has more than one open
/// towards the peer, whose ``ChannelTable`` refuses more than ``ChannelTable/maximumIncomingMessages``.
extension Connection {
    /// Waits until no other large message is being sent on this connection, then claims the turn; give
    /// it back with ``endMessage()``. A task cancelled while it waits leaves the line without the turn.
    ///
    /// - Throws: ``ConnectionClosedError`` when the connection closes first; `CancellationError` when the
    ///   task is cancelled before its turn comes (then it holds no turn to give back).
    package func beginMessage() async throws {
        let ticket = outbound.withLock { $0.messageTurns.ticket() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                    if let closed = state.closed { return .failure(closed) }
                    // Cancelled before it asked: the cancellation handler found it nowhere.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    switch state.messageTurns.ask(ticket) {
                    case .go:
                        return .success(())
                    case .wait:
                        state.messageWaiters[ticket] = continuation
                        return nil
                    }
                }
                if let verdict { continuation.resume(with: verdict) }
            }
        } onCancel: {
            let waiter = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard state.messageTurns.leave(ticket) else { return nil }
                return state.messageWaiters.removeValue(forKey: ticket)
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// How many large messages wait for their turn now (tests).
    package var messagesWaitingForTurn: Int {
        outbound.withLock { $0.messageTurns.waiting }
    }

    /// How many channels this side opened are open now (tests).
    package var outgoingChannelCount: Int {
        outbound.withLock { $0.channels.count }
    }

    /// The large message whose turn it was has been sent (or failed, or was cancelled): the next one may go.
    package func endMessage() {
        let next = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let ticket = state.messageTurns.pass() else { return nil }
            return state.messageWaiters.removeValue(forKey: ticket)  // the turn passes to it directly
        }
        next?.resume()
    }
}
