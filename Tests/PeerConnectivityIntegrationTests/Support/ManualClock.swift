import Synchronization

/// A monotonic clock that moves only when the test moves it: what a shell under test reads instead of the
/// machine's clock (`Advertiser.Configuration.uptimeNanoseconds`), so that a verdict about time (a token bucket's
/// refill, an expiry) does not depend on how fast the machine runs the test.
final class ManualClock: Sendable {
    /// Starts well above zero, as a machine's uptime does.
    private let nanoseconds = Mutex<UInt64>(1_000_000_000_000)

    /// The clock's time now, in nanoseconds.
    var uptimeNanoseconds: UInt64 { nanoseconds.withLock { $0 } }

    /// Moves the clock forward by `duration`.
    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds.withLock { $0 += UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000) }
    }
}
