import NIOCore

extension Session {
    /// The events of a session, in order: an `AsyncSequence` that ends when the session is released.
    ///
    /// Every iterator is a subscriber of its own and sees every event from the moment it was made;
    /// the first iterator made also gets the events from before it (they are kept for it, so none is
    /// lost between making the session and iterating it). So an observable model, a delegate adapter
    /// and the application can all follow one session.
    ///
    /// Taking data events out is what lets the session read more from the network: while any
    /// iterator has more than ``Configuration/receiveBufferLimit`` bytes of messages waiting, reading
    /// pauses and the senders' `send` calls wait. Nothing is dropped (but unreliable messages, which
    /// are dropped rather than queued). Cancelling the iterating task, or dropping the iterator, ends
    /// that subscription.
    public struct Events: AsyncSequence, Sendable {
        /// Each element is one event.
        public typealias Element = SessionEvent

        let runtime: SessionRuntime

        /// Makes an iterator: a new subscriber.
        public func makeAsyncIterator() -> Iterator {
            Iterator(subscription: Subscription(runtime: runtime))
        }

        /// Iterates the events of a session. `Sendable`, so it can be made where the subscription must
        /// start and handed to the task that reads it.
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            private let subscription: Subscription
            /// Events already taken from the queue, handed out one by one.
            private var batch = CircularBuffer<SessionEvent>()

            init(subscription: Subscription) {
                self.subscription = subscription
            }

            /// The next event, or `nil` once the session is gone or the task is cancelled. Runs where the
            /// caller runs (its actor, or the event loop a task prefers), with no hop to another executor.
            public nonisolated(nonsending) mutating func next() async -> SessionEvent? {
                let runtime = subscription.runtime
                let event = await runtime.events.next(subscription.id, batch: &batch)
                if case .dataReceived(let data, _, _) = event {
                    runtime.consumed(data.count, by: subscription.id)
                }
                return event
            }

            /// The next event, in the isolation of `actor` (what `for await` asks for): as ``next()``.
            ///
            /// - Parameter actor: the caller's actor, or `nil`.
            /// - Returns: the next event, or `nil` once the session is gone or the task is cancelled.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> SessionEvent? {
                await next()
            }
        }

        /// One subscriber; unsubscribes when the last copy of its iterator goes away.
        final class Subscription: Sendable {
            let runtime: SessionRuntime
            let id: Int

            /// Subscribes; claims the events from before if no one has.
            ///
            /// - Parameter filter: when given, only the events it accepts are queued for this subscriber.
            init(runtime: SessionRuntime, accepting filter: (@Sendable (SessionEvent) -> Bool)? = nil) {
                self.runtime = runtime
                self.id = runtime.events.subscribe(accepting: filter)
            }

            /// Takes over a subscription made already (with its snapshot, under the session's lock).
            init(runtime: SessionRuntime, id: Int) {
                self.runtime = runtime
                self.id = id
            }

            deinit {
                runtime.unsubscribed(id)
            }
        }
    }
}
