/// The time a reflector's idle check reads, and the pace of its sweep: the continuous clock in the tool. A test
/// gives one it moves itself, so that whether a runner counts as idle does not depend on how fast the machine runs.
package protocol IdleClock: Sendable {
    /// The time now.
    var now: ContinuousClock.Instant { get }

    /// Returns once `duration` has passed on this clock.
    ///
    /// - Parameter duration: how long to wait.
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    func sleep(for duration: Duration) async throws
}

/// The continuous clock, which the `reflector` tool runs on.
package struct ContinuousIdleClock: IdleClock {
    /// Makes the clock.
    package init() {}

    package var now: ContinuousClock.Instant { .now }

    package func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
