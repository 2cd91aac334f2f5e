import NIOCore
import Synchronization

/// Events from many producers to any number of subscribers that await them: a session's events,
/// a browser's, the transfers in progress of a session.
///
/// Each subscriber (one iterator of ``Session/events``) gets every event from the moment it
/// subscribed, in order; the first subscriber also gets the events from before it (they are kept
/// for it, so nothing is lost between making a session and iterating it), unless the hub is made
/// without keeping early events. A subscriber may start with events of its own (a snapshot, for a
/// browser's found peers) and may take only the events a filter accepts (so that a model of peer
/// states never holds messages). Each event may carry a byte count (a message's size): the hub
/// keeps, per subscriber, the bytes handed to it and not yet consumed, and reports the largest, the
/// *backlog*, which the session uses to pause reading.
///
/// It replaces `AsyncStream` on the session's data path: an iterator takes every queued element
/// under one lock acquisition, and nothing here is generic across a module boundary.
final class EventHub<Element: Sendable>: Sendable {
    private struct Subscriber {
        let id: Int
        var buffer = CircularBuffer<Element>(initialCapacity: 64)
        var waiter: UnsafeContinuation<Element?, Never>?
        /// Bytes of events yielded to this subscriber and not yet consumed.
        var unreadBytes = 0
        /// When set, only the events it accepts are queued for this subscriber (and counted).
        var filter: (@Sendable (Element) -> Bool)?
    }

    private struct State {
        /// Starts with the unclaimed subscriber that keeps the first events, if the hub keeps them.
        var subscribers: [Subscriber]
        var firstClaimed: Bool
        var nextID = 1
        var finished = false

        var backlog: Int {
            subscribers.reduce(0) { max($0, $1.unreadBytes) }
        }
    }

    private let state: Mutex<State>

    /// Makes a hub.
    ///
    /// - Parameter keepsEarlyEvents: whether events yielded before anyone subscribes are kept for
    ///   the first subscriber that claims them (a session's events); otherwise they go to no one.
    init(keepsEarlyEvents: Bool = true) {
        state = Mutex(
            State(subscribers: keepsEarlyEvents ? [Subscriber(id: 0)] : [], firstClaimed: !keepsEarlyEvents)
        )
    }

    /// Adds an event for every subscriber; wakes those that wait. Ignored after ``finish()``.
    ///
    /// - Parameters:
    ///   - element: the event.
    ///   - bytes: the size it counts for in the backlog (a message's length; 0 for other events).
    /// - Returns: the backlog after adding it.
    @discardableResult
    func yield(_ element: Element, bytes: Int = 0) -> Int {
        var woken: [UnsafeContinuation<Element?, Never>] = []
        let backlog = state.withLock { state -> Int in
            guard !state.finished else { return 0 }
            for index in state.subscribers.indices {
                if let filter = state.subscribers[index].filter, !filter(element) { continue }
                state.subscribers[index].unreadBytes += bytes
                if let waiter = state.subscribers[index].waiter {
                    state.subscribers[index].waiter = nil
                    woken.append(waiter)
                } else {
                    state.subscribers[index].buffer.append(element)
                }
            }
            return state.backlog
        }
        for waiter in woken { waiter.resume(returning: element) }
        return backlog
    }

    /// Ends every subscriber's sequence once its queued events are consumed.
    func finish() {
        let waiters = state.withLock { state -> [UnsafeContinuation<Element?, Never>] in
            state.finished = true
            var waiters: [UnsafeContinuation<Element?, Never>] = []
            for index in state.subscribers.indices {
                if let waiter = state.subscribers[index].waiter { waiters.append(waiter) }
                state.subscribers[index].waiter = nil
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// A new subscriber: the first one that claims them gets the events kept since the hub was made.
    ///
    /// - Parameters:
    ///   - claimsEarlyEvents: whether it takes the events kept for the first subscriber, if no one
    ///     has (then it also gets them unfiltered); `false` for a subscriber that starts from a snapshot.
    ///   - initial: events it gets first, before any yielded from now on (its snapshot).
    ///   - filter: when given, it gets only the events this accepts; called under the hub's lock.
    /// - Returns: its id.
    func subscribe(
        claimsEarlyEvents: Bool = true,
        replaying initial: [Element] = [],
        accepting filter: (@Sendable (Element) -> Bool)? = nil
    ) -> Int {
        state.withLock { state in
            if claimsEarlyEvents, !state.firstClaimed, let first = state.subscribers.firstIndex(where: { $0.id == 0 }) {
                state.firstClaimed = true
                state.subscribers[first].filter = filter
                state.subscribers[first].buffer.append(contentsOf: initial)
                return 0
            }
            let id = state.nextID
            state.nextID += 1
            var subscriber = Subscriber(id: id, filter: filter)
            subscriber.buffer.append(contentsOf: initial)
            state.subscribers.append(subscriber)
            return id
        }
    }

    /// Removes a subscriber and what it had not read.
    ///
    /// - Returns: the backlog without it.
    func unsubscribe(_ id: Int) -> Int {
        let (waiter, backlog) = state.withLock { state -> (UnsafeContinuation<Element?, Never>?, Int) in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return (nil, state.backlog) }
            let waiter = state.subscribers[index].waiter
            state.subscribers.remove(at: index)
            return (waiter, state.backlog)
        }
        waiter?.resume(returning: nil)
        return backlog
    }

    /// The subscriber consumed an event that counted `bytes`.
    ///
    /// - Returns: the backlog after it.
    func consume(_ id: Int, bytes: Int) -> Int {
        state.withLock { state in
            if let index = state.subscribers.firstIndex(where: { $0.id == id }) {
                state.subscribers[index].unreadBytes -= bytes
            }
            return state.backlog
        }
    }

    /// The largest count of unconsumed bytes among the subscribers.
    var backlog: Int { state.withLock { $0.backlog } }

    /// Moves every queued event of `id` into `batch`; `false` when it is finished and empty.
    private func takeAll(_ id: Int, into batch: inout CircularBuffer<Element>) -> Bool {
        state.withLock { state in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return false }
            if state.subscribers[index].buffer.isEmpty { return !state.finished }
            swap(&batch, &state.subscribers[index].buffer)
            return true
        }
    }

    /// The next event of subscriber `id`: from `batch` if it has one, else everything queued, else
    /// waits for one. `nil` once finished, unsubscribed, or when the waiting task is cancelled.
    nonisolated(nonsending) func next(_ id: Int, batch: inout CircularBuffer<Element>) async -> Element? {
        if let element = batch.popFirst() { return element }
        guard takeAll(id, into: &batch) else { return nil }
        if let element = batch.popFirst() { return element }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Element?, Never>) in
                let immediate = state.withLock { state -> Element?? in
                    guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return .some(nil) }
                    if let element = state.subscribers[index].buffer.popFirst() { return .some(element) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.subscribers[index].waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
                guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return nil }
                defer { state.subscribers[index].waiter = nil }
                return state.subscribers[index].waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
