import PeerConnectivityCore

/// Large messages (channels of kind message) go to a peer one at a time, in the order their sends began:
/// so they arrive in that order, and an honest sender never has more than one open towards the peer,
/// whose ``ChannelTable`` refuses more than ``ChannelTable/maximumIncomingMessages``.
extension Connection {
    /// Waits until no other large message is being sent on this connection, then claims the turn; give
    /// it back with ``endMessage()``.
    ///
    /// - Throws: ``ConnectionClosedError`` when the connection closes first.
    package func beginMessage() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                if let closed = state.closed { return .failure(closed) }
                guard state.sendingMessage else {
                    state.sendingMessage = true
                    return .success(())
                }
                state.messageWaiters.append(continuation)
                return nil
            }
            if let verdict { continuation.resume(with: verdict) }
        }
    }

    /// The large message whose turn it was has been sent (or failed): the next one may go.
    package func endMessage() {
        let next = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let next = state.messageWaiters.popFirst() else {
                state.sendingMessage = false
                return nil
            }
            return next  // the turn passes to it directly
        }
        next?.resume()
    }
}
