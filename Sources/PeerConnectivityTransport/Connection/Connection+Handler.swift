import NIOCore
import PeerConnectivityCore

/// What the ``ConnectionHandler`` uses, on the event loop: taking queued frames, and the peer's
/// answers about channels and the close.
extension Connection {
    /// Takes every queued message and control frame; or, when there are none and `bulkAllowed`, one
    /// channel frame; or marks the queue idle and returns `nil`.
    func takeNext(bulkAllowed: Bool) -> OutgoingWork? {
        let (work, waiters) = outbound.withLock { state -> (OutgoingWork?, [CheckedContinuation<Void, any Error>]) in
            if !state.pending.isEmpty {
                let batch = state.pending
                state.pending = CircularBuffer()
                state.pendingBytes = 0
                let waiters = state.waiters
                state.waiters = []
                return (.urgent(batch), waiters)
            }
            guard bulkAllowed, let (channelNumber, frame) = state.bulk.popNext() else {
                state.drainScheduled = false
                return (nil, [])
            }
            guard var record = state.channels[channelNumber] else { return (.bulk(frame), []) }
            record.openWritten = true
            record.queuedBytes -= frame.readableBytes
            var waiters: [CheckedContinuation<Void, any Error>] = []
            // Woken once half the queue has gone, not as soon as one chunk has (a thread wake-up per
            // 64 KiB), and only when the credit lets it write.
            if let writer = record.writer, record.credit >= record.writerNeeds,
                record.queuedBytes <= channelQueueLimit / 2
            {
                record.writer = nil
                waiters.append(writer)
            }
            state.channels[channelNumber] = record
            return (.bulk(frame), waiters)
        }
        for waiter in waiters { waiter.resume() }
        return work
    }

    /// The peer granted credit on a channel this side writes.
    func credited(_ increment: UInt32, on channelNumber: UInt32) {
        let writer = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var record = state.channels[channelNumber], record.failure == nil else { return nil }
            record.credit = min(record.credit + Int(increment), WireProtocol.maximumChannelWindow)
            // A writer the queue holds back is woken as the queue drains (see `takeNext`).
            let writer =
                record.canQueue(payloadLength: record.writerNeeds, queueLimit: channelQueueLimit) ? record.writer : nil
            if writer != nil { record.writer = nil }
            state.channels[channelNumber] = record
            return writer
        }
        writer?.resume()
    }

    /// The peer reset a channel this side writes: drop its frames, fail whoever waits on it.
    func resetByPeer(_ channelNumber: UInt32, _ code: ChannelResetCode) {
        let error = ChannelClosedError(channel: channelNumber, cause: .reset(code, byPeer: true))
        let waiters = outbound.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard var record = state.channels[channelNumber], record.failure == nil else { return [] }
            state.bulk.removeAll(on: channelNumber)
            let waiters = record.continuations
            record.writer = nil
            record.doneWaiter = nil
            record.haveWaiter = nil
            record.queuedBytes = 0
            record.failure = error
            state.channels[channelNumber] = record
            return waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Refuses further sends and fails those waiting; queued frames not yet written are dropped.
    func markClosed(_ error: ConnectionClosedError) {
        let (waiters, channelWaiters) = outbound.withLock {
            state -> ([CheckedContinuation<Void, any Error>], [(UInt32, CheckedContinuation<Void, any Error>)]) in
            if state.closed == nil { state.closed = error }
            state.pending.removeAll()
            state.pendingBytes = 0
            state.bulk.removeAll()
            let waiters = state.waiters + state.messageTurns.close().compactMap { state.messageWaiters[$0] }
            state.waiters = []
            state.messageWaiters.removeAll()
            let channelWaiters = state.channels.flatMap { number, record in record.continuations.map { (number, $0) } }
            state.channels = [:]
            return (waiters, channelWaiters)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        for (number, waiter) in channelWaiters {
            waiter.resume(throwing: ChannelClosedError(channel: number, cause: .connectionClosed(error.reason)))
        }
    }

    /// Refuses further sends but keeps what is queued, so a GOODBYE can follow it.
    func refuseNewSends(_ error: ConnectionClosedError) {
        outbound.withLock { state in
            if state.closed == nil { state.closed = error }
        }
    }
}
