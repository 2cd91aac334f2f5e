import Foundation
import Testing

@testable import PeerConnectivityBench

@Suite("The reflector's link timeline")
struct LinkTimelineTests {
    func sample(_ seconds: Double) throws -> TimedLinkSample {
        let json = """
            {"smoothedRoundTripNanoseconds": 1000, "roundTripVariationNanoseconds": 10, "retransmittedSegments": 0,
             "bytesRetransmitted": 0, "congestionWindowSegments": 10, "segmentSize": 1448, "bytesInFlight": 0,
             "notSentBytes": 0, "bytesSent": 0, "bytesReceived": 0}
            """
        return TimedLinkSample(seconds: seconds, link: try JSONDecoder().decode(LinkSample.self, from: Data(json.utf8)))
    }

    @Test("a sample a second until full; then every other goes and the period doubles, the start kept")
    func thinning() throws {
        var timeline = LinkTimeline(capacity: 10)
        var clock = 0.0
        for _ in 0..<9 {
            timeline.record(try sample(clock))
            clock += timeline.period
        }
        #expect(timeline.samples.count == 9 && timeline.period == 1)
        timeline.record(try sample(clock))
        #expect(timeline.samples.map(\.seconds) == [0, 2, 4, 6, 8] && timeline.period == 2)
        // A long run: memory stays bounded, the samples span it from its start, no gap over two periods.
        for _ in 0..<60 {
            clock += timeline.period
            timeline.record(try sample(clock))
        }
        #expect(timeline.samples.count < 10 && timeline.samples.first?.seconds == 0)
        #expect(timeline.period == 8_192, "one doubling every 5 samples after the first 10")
        let gaps = zip(timeline.samples.dropFirst(), timeline.samples).map { $0.seconds - $1.seconds }
        #expect(gaps.allSatisfy { $0 > 0 && $0 <= 2 * timeline.period }, "\(gaps)")
        #expect(
            timeline.samples.last?.seconds == clock || clock - (timeline.samples.last?.seconds ?? 0) <= timeline.period
        )
    }

    @Test("the report's own sample ends the timeline when it is later than the last; the timeline keeps its samples")
    func endsWithTheReport() throws {
        var timeline = LinkTimeline()
        timeline.record(try sample(0))
        timeline.record(try sample(1))
        #expect(timeline.samples(endingWith: try sample(2.5)).map(\.seconds) == [0, 1, 2.5])
        #expect(timeline.samples(endingWith: nil).map(\.seconds) == [0, 1])
        #expect(timeline.samples(endingWith: try sample(1)).map(\.seconds) == [0, 1], "not after the last")
        #expect(timeline.samples.map(\.seconds) == [0, 1])
        #expect(LinkTimeline().samples(endingWith: try sample(0)).map(\.seconds) == [0])
    }
}
