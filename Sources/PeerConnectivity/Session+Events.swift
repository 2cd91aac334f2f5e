extension Session {
    /// The events of a session, in order: an `AsyncSequence` that ends when the session is released.
    ///
    /// Taking data events out of it is what lets the session read more from the network: while more
    /// than ``Configuration/receiveBufferLimit`` bytes wait here, reading pauses and the senders'
    /// `send` calls wait. Nothing is dropped. Iterate it from one task.
    public struct Events: AsyncSequence, Sendable {
        /// Each element is one event.
        public typealias Element = SessionEvent

        let stream: AsyncStream<SessionEvent>
        let core: SessionCore

        /// Makes the iterator.
        public func makeAsyncIterator() -> Iterator {
            Iterator(base: stream.makeAsyncIterator(), core: core)
        }

        /// Iterates the events of a session.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<SessionEvent>.Iterator
            let core: SessionCore

            /// The next event, or `nil` once the session is gone.
            public mutating func next() async -> SessionEvent? {
                let event = await base.next()
                if case .dataReceived(let data, _) = event {
                    core.consumed(data.count)
                }
                return event
            }

            /// The next event, or `nil` once the session is gone; `isolation` is the caller's actor.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> SessionEvent? {
                let event = await base.next(isolation: actor)
                if case .dataReceived(let data, _) = event {
                    core.consumed(data.count)
                }
                return event
            }
        }
    }
}
