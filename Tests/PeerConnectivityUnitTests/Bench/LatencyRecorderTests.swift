import Testing

@testable import PeerConnectivityBench

@Suite("Round-trip statistics")
struct LatencyRecorderTests {
    @Test("min, max, mean and standard deviation are exact; percentiles within 0.1%")
    func summary() {
        var recorder = LatencyRecorder()
        for value in 1...10_000 { recorder.record(UInt64(value) * 1_000) }
        let summary = recorder.summary
        #expect(summary.count == 10_000)
        #expect(summary.minNanoseconds == 1_000 && summary.maxNanoseconds == 10_000_000)
        #expect(abs(summary.meanNanoseconds - 5_000_500) < 0.01)
        let expectedDeviation = (Double(10_000 * 10_000 - 1) / 12).squareRoot() * 1_000
        #expect(abs(summary.stddevNanoseconds - expectedDeviation) < 1)
        for (value, expected) in [
            (summary.p50Nanoseconds, 5_000_000.0), (summary.p90Nanoseconds, 9_000_000),
            (summary.p99Nanoseconds, 9_900_000),
            (summary.p999Nanoseconds, 9_990_000),
        ] {
            #expect(Double(value) >= expected && Double(value) <= expected * 1.001, "\(value) vs \(expected)")
        }
    }

    @Test("nothing recorded: all zero")
    func empty() {
        #expect(LatencyRecorder().summary == LatencySummary())
    }

    @Test("one value: every figure is that value")
    func single() {
        var recorder = LatencyRecorder()
        recorder.record(123_456)
        let summary = recorder.summary
        #expect(summary.p50Nanoseconds == 123_456 && summary.p999Nanoseconds == 123_456)
        #expect(summary.stddevNanoseconds == 0)
    }
}
