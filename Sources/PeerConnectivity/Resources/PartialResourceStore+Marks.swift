import Dispatch
import Synchronization

/// One transfer of a resource at a time: a resume that arrives on a new connection before the
/// transfer on the old one has kept its blocks waits for them.
extension PartialResourceStore {
    /// Marks a transfer of `key` as receiving, then calls `body` on `queue` with the mark: at once (on
    /// the caller's thread) when no transfer of the same resource is under way, else once that one has
    /// ended and kept its blocks, or with `nil` after ``earlierTransferWait`` (two of the same resource at
    /// once: the later one keeps nothing of it). Never blocks: `queue` may be shared with the earlier
    /// transfer.
    ///
    /// - Parameters:
    ///   - key: the resource.
    ///   - queue: where `body` runs when it has to wait.
    ///   - deadline: when to give up waiting.
    ///   - body: called once, with the mark to pass to ``end(_:mark:)``, or `nil`.
    func begin(
        _ key: Key,
        on queue: DispatchQueue,
        deadline: DispatchTime = .now() + PartialResourceStore.earlierTransferWait,
        then body: @escaping @Sendable (DispatchGroup?) -> Void
    ) {
        let (mine, earlier) = active.withLock { table -> (DispatchGroup?, DispatchGroup?) in
            if let group = table[key] { return (nil, group) }
            let group = DispatchGroup()
            group.enter()
            table[key] = group
            return (group, nil)
        }
        if let mine {
            body(mine)
            return
        }
        let waiting = Mutex(true)
        let goOn: @Sendable (_ timedOut: Bool) -> Void = { timedOut in
            // The earlier transfer's end and the deadline both come; the first goes on.
            let first = waiting.withLock { waiting -> Bool in
                defer { waiting = false }
                return waiting
            }
            guard first else { return }
            if timedOut { body(nil) } else { self.begin(key, on: queue, deadline: deadline, then: body) }
        }
        earlier!.notify(queue: queue) { goOn(false) }
        queue.asyncAfter(deadline: deadline) { goOn(true) }
    }

    /// The transfer of `key` begun with ``begin(_:on:deadline:then:)`` has ended (its blocks kept or removed).
    ///
    /// - Parameters:
    ///   - key: the resource.
    ///   - mark: what ``begin(_:on:deadline:then:)`` gave.
    func end(_ key: Key, mark: DispatchGroup) {
        active.withLock { table in
            if table[key] === mark { table[key] = nil }
        }
        mark.leave()
    }
}
