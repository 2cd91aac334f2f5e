import PeerConnectivityCore

/// A ``ConnectionDelegate`` that turns a connection's events into an `AsyncSequence`, for code that
/// waits on them rather than reacting on the event loop (tests, tools).
///
/// It never pauses reading: a consumer that falls behind buffers every message. It answers nothing
/// either: an invitation or a RESUME waits for the consumer's ``Connection/accept(delegate:keepaliveInterval:livenessTimeout:maximumMessageLength:)``
/// or ``Connection/decline(_:)``. Each element names its connection, as a listener's handler sees many.
/// The sequence of a single connection finishes after its ``ConnectionEvent/closed(peer:reason:)``;
/// one shared by a listener's connections finishes with ``finish()``.
package final class ConnectionEventStream: ConnectionDelegate, AsyncSequence {
    package typealias Element = (connection: Connection, event: ConnectionEvent)

    private let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let finishesOnClose: Bool

    /// Makes an empty stream.
    ///
    /// - Parameter finishesOnClose: `true` (one connection's stream) to finish after the first close.
    package init(finishesOnClose: Bool = true) {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        self.finishesOnClose = finishesOnClose
    }

    package func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        continuation.yield((connection, event))
        if finishesOnClose, case .closed = event { continuation.finish() }
        return .more
    }

    /// Ends the sequence (a listener's stream, when the test is done with it).
    package func finish() {
        continuation.finish()
    }

    package func makeAsyncIterator() -> AsyncStream<Element>.Iterator {
        stream.makeAsyncIterator()
    }
}
