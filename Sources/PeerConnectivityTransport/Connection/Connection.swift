import Logging
import NIOCore
import PeerConnectivityCore
import Synchronization

/// One TCP connection to a peer, usable from any thread.
///
/// Protocol work happens in the ``ConnectionHandler`` on the channel's event loop; this handle lets
/// Swift concurrency code send, accept, decline and close. Outbound data goes through a queue that
/// the event loop drains in batches (one flush per batch), and `send` suspends while more than
/// ``ConnectionConfiguration/outboundHighWatermark`` bytes wait, so a fast sender cannot grow memory
/// without bound.
package final class Connection: Sendable {
    private struct Outbound {
        var pending = CircularBuffer<ByteBuffer>()
        var pendingBytes = 0
        /// A drain will run without further prompting: one is queued on the event loop, or the
        /// channel is not writable and will drain when it becomes writable.
        var drainScheduled = false
        var closed: ConnectionClosedError?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    /// The channel this connection runs on.
    package let channel: any Channel
    /// Succeeds with the peer when the handshake completes; fails with ``ConnectionClosedError``.
    package let established: EventLoopFuture<PeerID>
    /// Succeeds when the channel has closed and the delegate has been told.
    package let closed: EventLoopFuture<Void>

    private let outbound = Mutex(Outbound())
    private let highWatermark: Int
    private let handler: NIOLoopBound<ConnectionHandler>

    init(channel: any Channel, handler: ConnectionHandler, highWatermark: Int) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.established = handler.establishedPromise.futureResult
        self.closed = handler.closedPromise.futureResult
        self.highWatermark = highWatermark
    }

    /// Queues an encoded frame for the peer, in order with every other frame queued before it.
    ///
    /// Returns once the frame is queued; suspends first while the queue is over its high watermark.
    ///
    /// - Parameter frame: an encoded frame (see ``FrameEncoder``).
    /// - Throws: ``ConnectionClosedError`` when the connection is closing or closed.
    package func send(_ frame: EncodedFrame) async throws {
        let (scheduleDrain, mustWait) = try outbound.withLock { state throws(ConnectionClosedError) -> (Bool, Bool) in
            if let closed = state.closed { throw closed }
            state.pending.append(frame.head)
            state.pendingBytes += frame.head.readableBytes
            for chunk in frame.rest {
                state.pending.append(chunk)
                state.pendingBytes += chunk.readableBytes
            }
            let schedule = !state.drainScheduled
            state.drainScheduled = true
            return (schedule, state.pendingBytes > highWatermark)
        }
        if scheduleDrain {
            let handler = self.handler
            channel.eventLoop.execute { handler.value.drainOutbound() }
        }
        if mustWait {
            try await waitForRoom()
        }
    }

    /// Accepts the pending invitation: the connection joins `delegate` (a session), with its settings.
    ///
    /// - Parameters:
    ///   - delegate: receives the connection's events from now on.
    ///   - keepaliveInterval: the session's keepalive interval.
    ///   - livenessTimeout: the session's liveness timeout.
    ///   - maximumMessageLength: the session's largest data message.
    /// - Throws: ``ConnectionClosedError`` when the invitation is no longer pending.
    package func accept(
        delegate: any ConnectionDelegate,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) async throws {
        let handler = self.handler
        try await channel.eventLoop.submit {
            try handler.value.accept(
                delegate: delegate,
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout,
                maximumMessageLength: maximumMessageLength
            )
        }.get()
    }

    /// Declines the pending invitation and closes the connection. Does nothing if none is pending.
    ///
    /// - Parameter reason: sent to the inviter.
    package func decline(_ reason: DisconnectReason) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.decline(reason) }
    }

    /// Says GOODBYE after the data already queued, then closes.
    ///
    /// - Parameter reason: sent to the peer and reported to the delegate.
    package func close(_ reason: DisconnectReason) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.close(reason) }
    }

    /// Resumes reading from the socket after the delegate paused it.
    package func resumeReading() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.resumeReading() }
    }

    // MARK: - Used by the handler, on the event loop

    /// Takes every queued frame, or marks the queue idle and returns `nil` when it is empty.
    func takePending() -> CircularBuffer<ByteBuffer>? {
        let (batch, waiters) = outbound.withLock {
            state -> (CircularBuffer<ByteBuffer>?, [CheckedContinuation<Void, any Error>]) in
            guard !state.pending.isEmpty else {
                state.drainScheduled = false
                return (nil, [])
            }
            let batch = state.pending
            state.pending = CircularBuffer()
            state.pendingBytes = 0
            let waiters = state.waiters
            state.waiters = []
            return (batch, waiters)
        }
        for waiter in waiters { waiter.resume() }
        return batch
    }

    /// Refuses further sends and fails those waiting; queued frames not yet written are dropped.
    func markClosed(_ error: ConnectionClosedError) {
        let waiters = outbound.withLock { state in
            if state.closed == nil { state.closed = error }
            state.pending.removeAll()
            state.pendingBytes = 0
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Refuses further sends but keeps what is queued, so a GOODBYE can follow it.
    func refuseNewSends(_ error: ConnectionClosedError) {
        outbound.withLock { state in
            if state.closed == nil { state.closed = error }
        }
    }

    private func waitForRoom() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                if let closed = state.closed { return .failure(closed) }
                if state.pendingBytes <= highWatermark { return .success(()) }
                state.waiters.append(continuation)
                return nil
            }
            if let verdict { continuation.resume(with: verdict) }
        }
    }
}
