import NIOCore
import Synchronization

/// The events of a session, from many producers to any number of subscribers that await them.
///
/// Each subscriber (one iterator of ``Session/events``) gets every event from the moment it
/// subscribed, in order; the first subscriber also gets the events from before it (they are kept
/// for it, so nothing is lost between making a session and iterating it). Each event may carry a
/// byte count (a message's size): the hub keeps, per subscriber, the bytes handed to it and not yet
/// consumed, and reports the largest, the *backlog*, which the session uses to pause reading.
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
    }

    private struct State {
        /// Starts with the unclaimed subscriber that keeps the first events.
        var subscribers = [Subscriber(id: 0)]
        var firstClaimed = false
        var nextID = 1
        var finished = false

        var backlog: Int {
            subscribers.reduce(0) { max($0, $1.unreadBytes) }
        }
    }

    private let state = Mutex(State())

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

    /// A new subscriber: the first one gets the events kept since the hub was made.
    ///
    /// - Returns: its id.
    func subscribe() -> Int {
        state.withLock { state in
            if !state.firstClaimed {
                state.firstClaimed = true
                return 0
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers.append(Subscriber(id: id))
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
    func next(_ id: Int, batch: inout CircularBuffer<Element>) async -> Element? {
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
