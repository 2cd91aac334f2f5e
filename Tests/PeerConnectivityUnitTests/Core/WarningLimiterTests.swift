import PeerConnectivityCore
import Testing

@Suite("Warnings about peers, rate-limited")
struct WarningLimiterTests {
    private let second: UInt64 = 1_000_000_000

    @Test("a burst passes, the rest are counted, and the next one that passes says how many were left out")
    func burstThenCount() {
        var limiter = WarningLimiter(burst: 3, perSecond: 1)
        #expect((0..<3).map { _ in limiter.admit(now: 0) } == [0, 0, 0])
        #expect((0..<10).allSatisfy { _ in limiter.admit(now: 0) == nil })
        #expect(limiter.admit(now: second / 2) == nil)
        #expect(limiter.admit(now: second + second / 2) == 11, "one a second again, with the count")
        #expect(limiter.admit(now: second + second / 2) == nil)
    }

    @Test("over a long flood, the written count stays near burst + rate × time")
    func flood() {
        var limiter = WarningLimiter(burst: 20, perSecond: 1)
        var written = 0
        var left = 0
        for index in 0..<100_000 {
            // 100,000 warnings over 10 s.
            if let before = limiter.admit(now: UInt64(index) * second / 10_000) {
                written += 1
                left += before
            }
        }
        #expect(written <= 20 + 10 + 1, "\(written) written")
        // Every warning is written or counted (the last second's count waits for the next one written).
        #expect(written + left >= 100_000 - 10_000, "\(written + left) written or counted")
    }

    @Test("after a quiet while the burst is back")
    func refills() {
        var limiter = WarningLimiter(burst: 2, perSecond: 1)
        _ = limiter.admit(now: 0)
        _ = limiter.admit(now: 0)
        #expect(limiter.admit(now: 0) == nil)
        #expect(limiter.admit(now: 10 * second) == 1)
        #expect(limiter.admit(now: 10 * second) == 0)
    }
}
