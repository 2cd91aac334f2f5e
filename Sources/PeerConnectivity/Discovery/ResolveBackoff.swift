/// How long a browser waits before resolving a service instance again after a resolve failed or timed
/// out: 0.5 s after the first failure, doubling after each further one, capped at 8 s, each delay
/// shortened by up to a quarter at random so that browsers that saw the same failure do not all ask
/// avahi-daemon again at the same moment.
///
/// There is no last attempt: a browser keeps trying while DNS-SD still reports the instance (Avahi
/// drops it when its records expire or the peer says goodbye), so a peer whose resolve failed once is
/// not invisible until it registers again. At the cap that is one resolve every 6-8 s (plus the resolve
/// timeout) per instance that does not resolve. After ``warningAfterFailures`` failures in a row the
/// browser logs a warning, once.
struct ResolveBackoff: Sendable {
    /// The delay after the first failure.
    var initial: Duration = .milliseconds(500)
    /// The longest delay.
    var maximum: Duration = .seconds(8)
    /// The largest fraction of a delay taken off at random (0 for none).
    var jitter: Double = 0.25
    /// Failures in a row after which the browser warns that an instance still does not resolve.
    var warningAfterFailures = 4

    /// The figures above.
    static let standard = ResolveBackoff()

    /// The delay before the next attempt.
    ///
    /// - Parameters:
    ///   - failures: failed attempts in a row so far, at least 1.
    ///   - random: a number in 0..<1 (0 takes nothing off).
    /// - Returns: `initial` doubled `failures - 1` times, at most `maximum`, less `jitter * random` of it.
    func delay(afterFailures failures: Int, random: Double) -> Duration {
        var base = initial
        var doublings = max(failures, 1) - 1
        while doublings > 0, base < maximum {
            base *= 2
            doublings -= 1
        }
        let capped = min(base, maximum)
        return capped * (1 - jitter * min(max(random, 0), 1))
    }
}
