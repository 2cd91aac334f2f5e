import Synchronization

/// The files of a folder in flight, so that cancelling the folder cancels them and starts no more.
final class FolderTransfers: Sendable {
    private struct State {
        var cancelled = false
        var running: [ObjectIdentifier: ResourceTransfer] = [:]
        /// What the files that ended did, summed.
        var ended: ResourceTransferStatistics
    }

    private let state: Mutex<State>

    /// The transfers of a folder whose files have `blocks` blocks in all.
    init(blocks: Int) {
        state = Mutex(State(ended: ResourceTransferStatistics(blocks: blocks)))
    }

    /// What the folder's files did so far: those that ended and those in flight, summed.
    var statistics: ResourceTransferStatistics {
        let (ended, running) = state.withLock { ($0.ended, Array($0.running.values)) }
        return running.reduce(into: ended) { $0.add($1.statistics) }
    }

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
        let statistics = transfer.statistics
        state.withLock { state in
            guard state.running.removeValue(forKey: ObjectIdentifier(transfer)) != nil else { return }
            state.ended.add(statistics)
        }
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
