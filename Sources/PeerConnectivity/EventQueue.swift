import NIOCore
import Synchronization

/// A queue of events from many producers to one consumer that awaits them.
///
/// It replaces `AsyncStream` on the session's data path: the iterator takes every queued element
/// under one lock acquisition, and nothing here is generic across a module boundary, so the
/// per-message cost is a lock and an append. Iteration ends after ``finish()`` once the queue is
/// drained, or when the consuming task is cancelled.
final class EventQueue<Element: Sendable>: Sendable {
    private struct State {
        var buffer = CircularBuffer<Element>(initialCapacity: 64)
        var waiter: UnsafeContinuation<Element?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Adds an element; wakes the consumer if it waits. Ignored after ``finish()``.
    func yield(_ element: Element) {
        let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// Ends the sequence once the queued elements are consumed.
    func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Moves every queued element into `batch`; returns `false` when the queue is finished and empty.
    private func takeAll(into batch: inout CircularBuffer<Element>) -> Bool {
        state.withLock { state in
            if state.buffer.isEmpty { return !state.finished }
            swap(&batch, &state.buffer)
            return true
        }
    }

    /// The next element: from `batch` if it has one, else everything queued, else waits for one.
    func next(batch: inout CircularBuffer<Element>) async -> Element? {
        if let element = batch.popFirst() { return element }
        guard takeAll(into: &batch) else { return nil }
        if let element = batch.popFirst() { return element }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Element?, Never>) in
                let immediate = state.withLock { state -> Element?? in
                    if let element = state.buffer.popFirst() { return .some(element) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
