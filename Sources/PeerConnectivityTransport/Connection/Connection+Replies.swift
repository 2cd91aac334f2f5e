import Foundation
import PeerConnectivityCore

/// What a session's responder uses from the connection's own read: its replies, and the storage of the messages
/// it answers.
extension Connection {
    /// Queues an encoded frame like ``send(_:)``, without waiting: for callers that answer from the
    /// connection's own read (a ``MessageResponder``'s reply), or queue from a task. It never writes to
    /// the socket itself, even from a task on the event loop: the event loop drains the queue once the
    /// read's frames are handled, or in its next turn (``scheduleDrain(batching:)``).
    ///
    /// Called from the handler's own read while nothing waits in the queue and the socket takes writes,
    /// the frame goes to the handler's ``ConnectionHandler/readReplies`` instead, which the read writes
    /// once its frames are handled: after every frame queued before it, as in the queue, without the
    /// queue's second lock and hand-over (``replyInRead(_:to:)``).
    ///
    /// - Parameter frame: an encoded frame.
    /// - Returns: whether the queue is over its high watermark: then await ``waitUntilDrained()``.
    /// - Throws: ``ConnectionClosedError`` when the connection is closing or closed.
    package func enqueue(_ frame: EncodedFrame) throws(ConnectionClosedError) -> Bool {
        if channel.eventLoop.inEventLoop {
            let handler = self.handler.value
            if handler.decoding, handler.takesReplies, try replyInRead(frame, to: handler) { return false }
        }
        let enqueued = try enqueueWithoutWaking(frame)
        wake(after: enqueued)
        return enqueued.overHighWatermark
    }

    /// The storage a message answered in this connection's read was copied into, taken for the next one (the
    /// connection keeps none until ``keepMessageStorage(_:)``); empty at first. On the event loop.
    package func takeMessageStorage() -> Data {
        let handler = self.handler.value
        defer { handler.messageStorage = Data() }
        return handler.messageStorage
    }

    /// Keeps a message's storage, which its responder let go of, for the next message's bytes. On the event loop.
    package func keepMessageStorage(_ data: Data) {
        handler.value.messageStorage = data
    }

    /// Gives `frame` to the handler's read, which is under way, when nothing waits in the queue: a frame
    /// queued before it (by another thread, or under a lock) is written first by the queue's drain, so
    /// then the frame follows it in the queue. `false` when it must be queued.
    func replyInRead(_ frame: EncodedFrame, to handler: ConnectionHandler) throws(ConnectionClosedError) -> Bool {
        let queueEmpty = try outbound.withLock { state throws(ConnectionClosedError) -> Bool in
            if let closed = state.closed { throw closed }
            return state.pending.isEmpty
        }
        guard queueEmpty else { return false }
        handler.readReplies.append(frame.head)
        if !frame.rest.isEmpty { handler.readReplies.append(contentsOf: frame.rest) }
        return true
    }
}
