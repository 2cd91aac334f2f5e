import Testing

@testable import PeerConnectivityBench

/// The bulk test's byte counters, which the interval reports read while the streams' tasks count.
@Suite("Bulk counters")
struct BulkCountersTests {
    @Test("with two streams a snapshot's totals are its streams' sums, even while the streams count on other threads")
    func snapshotAddsUp() async {
        let counters = BulkTest.Counters(streams: 2)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<2 {
                group.addTask {
                    for _ in 0..<20_000 {
                        counters.sent(5, stream: index)
                        counters.received(3, stream: index)
                    }
                }
            }
            group.addTask {
                for _ in 0..<2_000 {
                    let snapshot = counters.snapshot
                    #expect(snapshot.sent == snapshot.streams.sent.reduce(0, +))
                    #expect(snapshot.received == snapshot.streams.received.reduce(0, +))
                }
            }
        }
        let snapshot = counters.snapshot
        #expect(snapshot.sent == 200_000 && snapshot.received == 120_000)
        #expect(snapshot.streams.sent == [100_000, 100_000] && snapshot.streams.received == [60_000, 60_000])
    }

    @Test("with one stream the totals are the atomics' and no stream is listed")
    func oneStream() {
        let counters = BulkTest.Counters()
        counters.sent(7, stream: 0)
        counters.received(4, stream: 0)
        let snapshot = counters.snapshot
        #expect(snapshot.sent == 7 && snapshot.received == 4)
        #expect(snapshot.streams.sent.isEmpty && snapshot.streams.received.isEmpty)
    }
}
