import PeerConnectivityBench
import Synchronization
import Testing

/// An ``IdleClock`` that moves only when the test moves it: the reflector's idle check reads it, and its sweep
/// sleeps on it, so that whether a runner counts as idle is what the test says, not what a loaded machine let pass.
final class ManualIdleClock: IdleClock {
    private struct Sleeper {
        var id: Int
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = ContinuousClock.now
        var nextID = 0
        var sleepers: [Sleeper] = []
        /// Sleeps cancelled before they began.
        var cancelled: Set<Int> = []
        /// Sleeps begun since the clock was made.
        var sleeps = 0
    }

    private let state = Mutex(State())

    var now: ContinuousClock.Instant { state.withLock { $0.now } }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: state.now + duration, continuation: continuation))
                    state.sleeps += 1
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and wakes the sleeps it ends; returns once each of them is asleep again,
    /// i.e. the sweep has done what it does at the new time.
    ///
    /// First waits for the sweep to be asleep, so that its sleep counts from before the move. Both waits are for
    /// the reflector's own events; their bound is only reached when it stops sweeping, and is generous, for a machine
    /// busy with the suite in parallel.
    func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitFor("the idle sweep to sleep", sourceLocation: sourceLocation) {
            self.state.withLock { !$0.sleepers.isEmpty }
        }
        let (due, sleepsBefore) = state.withLock { state in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return (due, state.sleeps)
        }
        for sleeper in due { sleeper.continuation.resume() }
        try await waitFor("the idle sweep to sleep again", sourceLocation: sourceLocation) {
            self.state.withLock { $0.sleeps >= sleepsBefore + due.count }
        }
    }
}
