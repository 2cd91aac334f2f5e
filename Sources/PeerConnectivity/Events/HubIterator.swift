import NIOCore

/// Iterates the events of one subscriber of an ``EventHub`` whose events count no bytes (a browser's,
/// the transfers in flight); unsubscribes when the last copy of it goes away.
struct HubIterator<Element: Sendable> {
    private let subscription: Subscription
    private var batch = CircularBuffer<Element>()

    /// Takes over subscriber `id` of `hub`.
    init(hub: EventHub<Element>, id: Int) {
        self.subscription = Subscription(hub: hub, id: id)
    }

    /// The next event, or `nil` once the hub is finished or the task is cancelled.
    nonisolated(nonsending) mutating func next() async -> Element? {
        await subscription.hub.next(subscription.id, batch: &batch)
    }

    private final class Subscription: Sendable {
        let hub: EventHub<Element>
        let id: Int

        init(hub: EventHub<Element>, id: Int) {
            self.hub = hub
            self.id = id
        }

        deinit {
            _ = hub.unsubscribe(id)
        }
    }
}
