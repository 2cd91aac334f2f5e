import NIOCore

extension Session {
    /// The events of a session, in order: an `AsyncSequence` that ends when the session is released.
    ///
    /// Taking data events out of it is what lets the session read more from the network: while more
    /// than ``Configuration/receiveBufferLimit`` bytes wait here, reading pauses and the senders'
    /// `send` calls wait. Nothing is dropped. Iterate it from one task; cancelling that task ends
    /// the iteration.
    public struct Events: AsyncSequence, Sendable {
        /// Each element is one event.
        public typealias Element = SessionEvent

        let core: SessionCore

        /// Makes the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(core: core)
        }

        /// Iterates the events of a session.
        public struct Iterator: AsyncIteratorProtocol {
            let core: SessionCore
            /// Events already taken from the queue, handed out one by one.
            private var batch = CircularBuffer<SessionEvent>()

            init(core: SessionCore) {
                self.core = core
            }

            /// The next event, or `nil` once the session is gone or the task is cancelled.
            public mutating func next() async -> SessionEvent? {
                let event = await core.events.next(batch: &batch)
                if case .dataReceived(let data, _, _) = event {
                    core.consumed(data.count)
                }
                return event
            }
        }
    }
}
