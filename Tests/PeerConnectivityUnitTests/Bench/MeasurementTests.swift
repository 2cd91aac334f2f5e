import Foundation
import PeerConnectivityBench
import Testing

/// The measurements every tool shares: the latency histogram and process samples.
@Suite("Measurements")
struct MeasurementTests {
    @Test("a set of samples is summarised by the runner's histogram, within its 3 significant digits")
    func latencyPercentiles() {
        let latency = LatencySummary(nanoseconds: (1...100).map { UInt64($0) * 1_000 }.shuffled())
        #expect(latency.count == 100)
        for (value, expected) in [
            (latency.p50Nanoseconds, 50_000.0), (latency.p90Nanoseconds, 90_000), (latency.p99Nanoseconds, 99_000),
        ] {
            #expect(abs(Double(value) - expected) <= expected / 1_000, "\(value) for \(expected)")
        }
        #expect(latency.maxNanoseconds == 100_000)
        #expect(LatencySummary(nanoseconds: []).p99Nanoseconds == 0)
    }

    @Test("this process's sample reads its resident set and peak")
    func processSample() {
        let sample = ProcessSample.current()
        #expect(sample.residentBytes > 0)
        #expect(sample.peakResidentBytes >= sample.residentBytes)
    }
}
