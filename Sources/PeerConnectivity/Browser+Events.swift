extension Browser {
    /// Found and lost peers, in order: an `AsyncSequence` for any number of subscribers.
    ///
    /// Every iterator is a subscriber of its own: it starts with a `.found` for each peer found and not
    /// lost at that moment, then gets every change after it. So a model, a delegate and the
    /// application can each follow one browser, and an iterator made late misses nothing that still
    /// holds. It ends when the browser stops (or is released), and throws ``DiscoveryError`` if
    /// avahi-daemon goes away while browsing. Cancelling the iterating task, or dropping the iterator,
    /// ends that subscription.
    public struct Events: AsyncSequence, Sendable {
        /// Each element is one found or lost peer.
        public typealias Element = BrowserEvent

        let runtime: BrowserRuntime

        /// Makes an iterator: a new subscriber, which starts with the peers found now.
        public func makeAsyncIterator() -> Iterator {
            Iterator(runtime: runtime, id: runtime.subscribe(replayingFoundPeers: true).id)
        }

        /// Iterates the events of a browser. `Sendable`, so it can be made where the subscription must
        /// start and handed to the task that reads it.
        public struct Iterator: AsyncIteratorProtocol, Sendable {
            private let runtime: BrowserRuntime
            private var events: HubIterator<BrowserEvent>
            private var threw = false

            /// Takes over subscriber `id` of the browser's events.
            init(runtime: BrowserRuntime, id: Int) {
                self.runtime = runtime
                self.events = HubIterator(hub: runtime.events, id: id)
            }

            /// The next event, or `nil` once the browser has stopped or the task is cancelled.
            ///
            /// - Throws: ``DiscoveryError`` once, after the last event, when browsing failed.
            public mutating func next() async throws -> BrowserEvent? {
                if let event = await events.next() { return event }
                if !threw, let failure = runtime.failure {
                    threw = true
                    throw failure
                }
                return nil
            }
        }
    }
}
