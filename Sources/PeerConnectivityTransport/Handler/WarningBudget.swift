import Logging
import NIOCore
import PeerConnectivityCore
import Synchronization

/// The warnings about peers that the connections of one listener or session may write: a
/// ``WarningLimiter`` shared by all of them, so that a flood of bad connections writes a bounded log.
package final class WarningBudget: Sendable {
    private let limiter: Mutex<WarningLimiter>
    private let uptimeNanoseconds: @Sendable () -> UInt64

    /// - Parameters:
    ///   - limiter: the burst and rate.
    ///   - uptimeNanoseconds: the monotonic time the budget earns back by: the event loop's clock unless a test
    ///     gives one it moves.
    package init(
        _ limiter: WarningLimiter = WarningLimiter(),
        uptimeNanoseconds: @escaping @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds }
    ) {
        self.limiter = Mutex(limiter)
        self.uptimeNanoseconds = uptimeNanoseconds
    }

    /// Writes `message` as a warning if the budget allows, saying how many were left out before it;
    /// else only at debug level.
    ///
    /// - Parameters:
    ///   - message: the warning.
    ///   - logger: where to write it.
    package func warn(_ message: @autoclosure () -> String, to logger: Logger) {
        let now = uptimeNanoseconds()
        guard let left = limiter.withLock({ $0.admit(now: now) }) else {
            logger.debug("\(message()) (warning rate limit reached)")
            return
        }
        if left > 0 {
            logger.warning("\(message()) (\(left) similar warnings left out before this one: rate limit)")
        } else {
            logger.warning("\(message())")
        }
    }
}
