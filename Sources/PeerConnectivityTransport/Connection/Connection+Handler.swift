import NIOCore
import PeerConnectivityCore

/// What the ``ConnectionHandler`` uses, on the event loop: taking queued frames, and the peer's
/// answers about channels and the close.
extension Connection {
    /// Takes every queued message and control frame into `batch`; or, when there are none and
    /// `bulkAllowed`, one channel frame; or marks the queue idle and returns `nil`.
    ///
    /// - Parameters:
    ///   - bulkAllowed: whether a channel frame may be taken.
    ///   - settling: whether a batch that leaves nothing else to take marks the queue idle at once (the
    ///     next ask would find nothing and mark it: a message's drain then takes the lock once, not twice).
    ///   - batch: the caller's batch, written out and no longer needed: emptied and given to the queue for
    ///     the frames queued next, so that taking allocates nothing (the queue's storage becomes the batch).
    func takeNext(
        bulkAllowed: Bool,
        settling: Bool = false,
        into batch: inout CircularBuffer<ByteBuffer>
    ) -> OutgoingWork? {
        let (work, waiters) = outbound.withLock { state -> (OutgoingWork?, [CheckedContinuation<Void, any Error>]) in
            if !state.pending.isEmpty {
                // Empty already, but for a drain entered again while the outer one writes the batch (from its
                // own copy): those frames must never be queued a second time.
                batch.removeAll(keepingCapacity: true)
                swap(&batch, &state.pending)
                state.pendingBytes = 0
                let waiters = state.waiters
                state.waiters = []
                let settled = settling && (!bulkAllowed || state.channels.isQueueEmpty)
                if settled { state.drainScheduled = false }
                return (.urgent(settled: settled), waiters)
            }
            guard bulkAllowed, let (frame, writer) = state.channels.takeNext(queueLimit: channelQueueLimit) else {
                state.drainScheduled = false
                return (nil, [])
            }
            return (.bulk(frame), writer.map { [$0] } ?? [])
        }
        for waiter in waiters { waiter.resume() }
        return work
    }

    /// The peer granted credit on a channel this side writes.
    func credited(_ increment: UInt32, on channelNumber: UInt32) {
        let writer = outbound.withLock {
            $0.channels.credited(increment, on: channelNumber, queueLimit: channelQueueLimit)
        }
        writer?.resume()
    }

    /// The peer reset a channel this side writes: drop its frames, fail whoever waits on it.
    func resetByPeer(_ channelNumber: UInt32, _ code: ChannelResetCode) {
        let (waiters, error) = outbound.withLock { $0.channels.resetByPeer(channelNumber, code) }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Refuses further sends and fails those waiting; queued frames not yet written are dropped.
    func markClosed(_ error: ConnectionClosedError) {
        let (waiters, channelWaiters) = outbound.withLock {
            state -> (
                [CheckedContinuation<Void, any Error>],
                [(waiter: CheckedContinuation<Void, any Error>, error: ChannelClosedError)]
            ) in
            if state.closed == nil { state.closed = error }
            state.pending.removeAll()
            state.pendingBytes = 0
            let waiters = state.waiters + state.messageTurns.close().compactMap { state.messageWaiters[$0] }
            state.waiters = []
            state.messageWaiters.removeAll()
            return (waiters, state.channels.close(error.reason))
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        for (waiter, channelError) in channelWaiters { waiter.resume(throwing: channelError) }
    }

    /// Refuses further sends but keeps what is queued, so a GOODBYE can follow it.
    func refuseNewSends(_ error: ConnectionClosedError) {
        outbound.withLock { state in
            if state.closed == nil { state.closed = error }
            state.channels.refuseNewWrites(error.reason)
        }
    }
}
