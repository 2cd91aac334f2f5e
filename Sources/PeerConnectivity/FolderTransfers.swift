import Synchronization

/// The files of a folder in flight, so that cancelling the folder cancels them and starts no more.
final class FolderTransfers: Sendable {
    private struct State {
        var cancelled = false
        var running: [ObjectIdentifier: ResourceTransfer] = [:]
    }

    private let state = Mutex(State())

    /// Whether the folder was cancelled.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Records a file that started; cancels it at once if the folder was cancelled.
    func add(_ transfer: ResourceTransfer) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.running[ObjectIdentifier(transfer)] = transfer }
            return state.cancelled
        }
        if cancelled { transfer.cancel() }
    }

    /// Forgets a file that ended.
    func remove(_ transfer: ResourceTransfer) {
        _ = state.withLock { $0.running.removeValue(forKey: ObjectIdentifier(transfer)) }
    }

    /// Cancels the folder: the files in flight, and every later one as it starts.
    func cancel() {
        let running = state.withLock { state in
            state.cancelled = true
            return Array(state.running.values)
        }
        for transfer in running { transfer.cancel() }
    }

    /// Cancels the files in flight (after one failed), leaving the folder itself uncancelled.
    func cancelRunning() {
        for transfer in state.withLock({ Array($0.running.values) }) { transfer.cancel() }
    }
}
