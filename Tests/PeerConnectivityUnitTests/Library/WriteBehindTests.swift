import Testing

@testable import PeerConnectivity

/// `WriteBehind`, in memory: which ranges of a growing file go to writeback and which leave the cache.
@Suite("Write-behind of received resources")
struct WriteBehindTests {
    /// Feeds writes of `chunk` bytes up to `total`; returns every advice given, in order.
    private func advices(
        window: UInt64,
        chunk: UInt64,
        total: UInt64,
        freeRun: UInt64 = 0
    ) -> [WriteBehind.Advice] {
        var policy = WriteBehind(window: window, freeRun: freeRun)
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

    @Test(
        "the free run is left alone; writeback and drops start at its end and go on as from a file's start",
        arguments: [UInt64(0), 1, 250, 1_000]
    )
    func freeRun(freeRun: UInt64) throws {
        let window: UInt64 = 100
        let total = freeRun + 10 * window + 13
        let given = advices(window: window, chunk: 7, total: total, freeRun: freeRun)
        let first = try #require(given.first?.startWriteback)
        #expect(first.offset == freeRun, "nothing before the free run's end goes to writeback")
        #expect(first.length >= window)
        let firstDrop = try #require(given.first(where: { $0.dropFromCache != nil })?.dropFromCache)
        #expect(firstDrop.offset == freeRun, "nothing before the free run's end is dropped")
        // Under a window past the free run, nothing is asked at all.
        #expect(advices(window: window, chunk: 7, total: freeRun + window - 1, freeRun: freeRun).isEmpty)
    }
}
