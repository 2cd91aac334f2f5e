import Testing

@testable import PeerConnectivityBench

/// How rates print (`-f`): the unit that fits by default, fixed units on request.
@Suite("Rate units")
struct RateFormatTests {
    /// Rates in bytes a second and how they print.
    static let automaticCases: [(Double, String)] = [
        (2_500_000, "20.0 Mbit/s"),
        (2_387_500, "19.1 Mbit/s"),
        (117_750_000, "942 Mbit/s"),
        (427_500_000, "3.42 Gbit/s"),
        (125, "1.00 Kbit/s"),
        (12, "96.0 bit/s"),
        (0, "0 bit/s"),
        (124_999.875, "1.00 Mbit/s"),
    ]

    @Test("automatic: the bits-a-second unit that fits, three significant digits", arguments: automaticCases)
    func automatic(bytesPerSecond: Double, printed: String) {
        #expect(RateFormat.automatic.string(bytesPerSecond: bytesPerSecond) == printed)
    }

    @Test("fixed units: k/m/g in bits, K/M/G in bytes, powers of 1,000; a or nothing else by letter")
    func fixed() {
        let rate = 2_380_000_000.0
        let expected = [
            "k": "19040000.00 Kbit/s", "m": "19040.00 Mbit/s", "g": "19.04 Gbit/s",
            "K": "2380000.00 KB/s", "M": "2380.00 MB/s", "G": "2.38 GB/s", "a": "19.0 Gbit/s",
        ]
        for (letter, printed) in expected {
            #expect(RateFormat(letter: letter)?.string(bytesPerSecond: rate) == printed, "-f \(letter)")
        }
        for letter in ["", "b", "t", "T", "mm", "Mbit"] {
            #expect(RateFormat(letter: letter) == nil, "-f \(letter)")
        }
    }

    @Test("an interval line in the units asked for")
    func intervalLine() {
        var interval = IntervalResult(startSeconds: 1, endSeconds: 2)
        interval.sentBytes = 2_500_000
        #expect(interval.line.hasSuffix("20.0 Mbit/s sent"), "\(interval.line)")
        #expect(interval.line(format: .bytes(.mega)).hasSuffix("2.50 MB/s sent"))
    }

    @Test("with streams each way, a line per stream and their sum, as iperf3 prints them")
    func streamLines() {
        var interval = IntervalResult(startSeconds: 0, endSeconds: 1)
        interval.sentBytes = 3_000_000
        interval.streamSentBytes = [1_000_000, 2_000_000]
        let lines = interval.lines(format: .automatic)
        #expect(
            lines == [
                "[  1] [   0.0-   1.0 s] 8.00 Mbit/s sent", "[  2] [   0.0-   1.0 s] 16.0 Mbit/s sent",
                "[SUM] [   0.0-   1.0 s] 24.0 Mbit/s sent",
            ]
        )
        interval.streamSentBytes = nil
        #expect(interval.lines(format: .automatic) == [interval.line])
    }
}
