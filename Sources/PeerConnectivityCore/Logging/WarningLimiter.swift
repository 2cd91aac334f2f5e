/// A token bucket for log warnings that peers cause (malformed frames, refused handshakes): a burst
/// is written, then about one a second; the rest are counted, and the next warning written says how many
/// were left out. Without it, every attacking connection would add its own lines to the log.
package struct WarningLimiter: Sendable {
    /// The burst written at once.
    package let burst: Int
    /// Warnings written per second once the burst is spent.
    package let perSecond: Double

    private var tokens: Double
    private var lastRefill: UInt64?
    private var suppressed = 0

    /// The default: a burst of 20, then 1 a second.
    package init(burst: Int = 20, perSecond: Double = 1) {
        precondition(burst >= 1 && perSecond > 0, "a limiter must let warnings through")
        self.burst = burst
        self.perSecond = perSecond
        self.tokens = Double(burst)
    }

    /// Asks to write one warning at `now` (nanoseconds of a monotonic clock).
    ///
    /// - Parameter now: the time.
    /// - Returns: `nil` when the warning is to be left out (counted); else how many were left out
    ///   since the last one written (0 when none), to say in this one.
    package mutating func admit(now: UInt64) -> Int? {
        if let lastRefill, now > lastRefill {
            tokens = min(Double(burst), tokens + Double(now - lastRefill) / 1e9 * perSecond)
        }
        lastRefill = now
        guard tokens >= 1 else {
            suppressed += 1
            return nil
        }
        tokens -= 1
        defer { suppressed = 0 }
        return suppressed
    }
}
