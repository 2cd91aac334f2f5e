import Testing

@testable import PeerConnectivity

/// `WriteBehind`, in memory: which ranges of a growing file go to writeback and which leave the cache.
@Suite("Write-behind of received resources")
struct WriteBehindTests {
    /// Feeds writes of `chunk` bytes up to `total`; returns every advice given, in order.
    private func advices(window: UInt64, chunk: UInt64, total: UInt64) -> [WriteBehind.Advice] {
        var policy = WriteBehind(window: window)
        var advices: [WriteBehind.Advice] = []
        var written: UInt64 = 0
        while written < total {
            written = min(total, written + chunk)
            let advice = policy.wrote(upTo: written)
            if advice != WriteBehind.Advice() { advices.append(advice) }
        }
        return advices
    }

    @Test("nothing is asked until a window is complete; a file under three windows is never dropped")
    func smallFiles() {
        #expect(advices(window: 100, chunk: 7, total: 99).isEmpty)
        let twoWindows = advices(window: 100, chunk: 7, total: 299)
        #expect(twoWindows.count == 2)
        #expect(twoWindows.allSatisfy { $0.dropFromCache == nil })
    }

    @Test(
        "every byte goes to writeback once, in order; drops follow in order, always two windows behind",
        arguments: [(UInt64(100), UInt64(7)), (100, 100), (100, 250), (8 << 20, 65_527)]
    )
    func coverage(window: UInt64, chunk: UInt64) throws {
        let total = 20 * window + 13
        var writtenBack: UInt64 = 0
        var dropped: UInt64 = 0
        for advice in advices(window: window, chunk: chunk, total: total) {
            let writeback = try #require(advice.startWriteback)
            #expect(writeback.offset == writtenBack, "writeback continues where the last one ended")
            #expect(writeback.length >= window)
            writtenBack += writeback.length
            if let drop = advice.dropFromCache {
                #expect(drop.offset == dropped, "drops continue where the last one ended")
                #expect(drop.length > 0)
                dropped += drop.length
                #expect(dropped + 2 * window <= writtenBack, "what stays cached: at least the last two windows")
            }
        }
        // The tail after the last complete window is left to the kernel; everything before went to writeback.
        #expect(writtenBack > total - window)
        #expect(writtenBack <= total)
        #expect(dropped > 0)
    }
}
