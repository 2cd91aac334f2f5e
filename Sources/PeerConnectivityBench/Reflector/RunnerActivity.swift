import Synchronization

/// When a runner last did something (a message, a stream or resource begun or ended) and how many of its
/// transfers are under way: what the reflector's idle check reads. Keepalives do not count.
final class RunnerActivity: Sendable {
    private struct State {
        var last: ContinuousClock.Instant
        var transfers = 0
    }

    private let clock: any IdleClock
    private let state: Mutex<State>

    /// A runner that did something now.
    ///
    /// - Parameter clock: the clock its times are read from (the idle check's).
    init(clock: any IdleClock) {
        self.clock = clock
        state = Mutex(State(last: clock.now))
    }

    /// The runner did something now.
    func touch() {
        let now = clock.now
        state.withLock { $0.last = now }
    }

    /// A stream or resource of the runner's began.
    func began() {
        let now = clock.now
        state.withLock { state in
            state.last = now
            state.transfers += 1
        }
    }

    /// A stream or resource of the runner's ended.
    func ended() {
        let now = clock.now
        state.withLock { state in
            state.last = now
            state.transfers = max(0, state.transfers - 1)
        }
    }

    /// When the runner counts as idle if nothing happens before: `nil` while a transfer is under way.
    ///
    /// - Parameter idleTimeout: how long a runner may do nothing.
    /// - Returns: the deadline.
    func idleDeadline(after idleTimeout: Duration) -> ContinuousClock.Instant? {
        state.withLock { $0.transfers > 0 ? nil : $0.last + idleTimeout }
    }
}
