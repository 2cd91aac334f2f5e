/// What one interval of a run carried (`--interval`): printed live and kept in the document's
/// `intervals`, as iperf3 does. Times are seconds from the start of the test; the fields a test does
/// not have are nil.
public struct IntervalResult: Codable, Hashable, Sendable {
    /// Where the interval starts, in seconds from the start of the test.
    public var startSeconds: Double
    /// Where it ends.
    public var endSeconds: Double
    /// Bytes the runner wrote in it (bulk, forward).
    public var sentBytes: Int?
    /// Bytes the runner read in it (bulk, reverse).
    public var receivedBytes: Int?
    /// Messages sent in it (message tests).
    public var messagesSent: Int?
    /// Intact echoes that arrived in it.
    public var messagesEchoed: Int?
    /// Messages counted lost in it.
    public var messagesLost: Int?
    /// The median round trip of its echoes, in nanoseconds.
    public var roundTripP50Nanoseconds: UInt64?
    /// The 99th percentile.
    public var roundTripP99Nanoseconds: UInt64?
    /// Bulk with `--omit`: the interval began in the omitted seconds, so its bytes are not in the totals.
    public var omitted: Bool?
    /// Bulk with `-P` above 1: each forward stream's bytes written in it, in stream order.
    public var streamSentBytes: [Int]?
    /// Bulk with `-P` above 1: each reverse stream's bytes read in it.
    public var streamReceivedBytes: [Int]?
    /// Responsiveness: the phase under way when the interval ended.
    public var phase: String?
    /// Responsiveness: the median round trip of the self probes answered in it (the foreign probes' is
    /// ``roundTripP50Nanoseconds``), in nanoseconds.
    public var selfRoundTripP50Nanoseconds: UInt64?
    /// Responsiveness: the median round trip of the datagram probes answered in it, in nanoseconds.
    public var datagramRoundTripP50Nanoseconds: UInt64?
    /// Bulk and responsiveness: the run's session connection as this runner's kernel saw it as the interval
    /// ended (`TCP_INFO`); nil where the system does not tell.
    public var link: LinkSample?

    /// Makes an interval with no figures yet.
    ///
    /// - Parameters:
    ///   - startSeconds: its start.
    ///   - endSeconds: its end.
    public init(startSeconds: Double, endSeconds: Double) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    /// The interval's length in seconds.
    public var seconds: Double { max(endSeconds - startSeconds, 0) }

    /// One line in automatic units: "[  3.0-  4.0 s] 13.0 Gbit/s sent" or "... 1,000 echoed, 0 lost, p50 81 us".
    public var line: String { line(format: .automatic) }

    /// The lines to print: with streams each way (`-P`), a line per stream ("[  1] [ 0.0-  1.0 s] ...") and
    /// their sum ("[SUM] ..."), as iperf3 prints them; else ``line(format:)``.
    ///
    /// - Parameter format: how rates print.
    /// - Returns: the lines.
    public func lines(format: RateFormat) -> [String] {
        let count = max(streamSentBytes?.count ?? 0, streamReceivedBytes?.count ?? 0)
        guard count > 1 else { return [line(format: format)] }
        let streams = (0..<count).map { index in
            var stream = IntervalResult(startSeconds: startSeconds, endSeconds: endSeconds)
            stream.sentBytes = streamSentBytes.flatMap { $0.indices.contains(index) ? $0[index] : nil }
            stream.receivedBytes = streamReceivedBytes.flatMap { $0.indices.contains(index) ? $0[index] : nil }
            stream.omitted = omitted
            return String(format: "[%3d] ", index + 1) + stream.line(format: format)
        }
        return streams + ["[SUM] " + line(format: format)]
    }

    /// One line with rates in `format`.
    ///
    /// - Parameter format: how rates print (as iperf3's `-f`).
    /// - Returns: the line.
    public func line(format: RateFormat) -> String {
        var parts: [String] = []
        func rate(_ bytes: Int) -> String {
            seconds > 0 ? format.string(bytesPerSecond: Double(bytes) / seconds) : "-"
        }
        if let sentBytes { parts.append("\(rate(sentBytes)) sent") }
        if let receivedBytes { parts.append("\(rate(receivedBytes)) received") }
        if phase != nil || selfRoundTripP50Nanoseconds != nil {
            var probes: [String] = []
            if let p50 = roundTripP50Nanoseconds { probes.append("\(Self.duration(p50)) foreign") }
            if let p50 = selfRoundTripP50Nanoseconds { probes.append("\(Self.duration(p50)) self") }
            if let p50 = datagramRoundTripP50Nanoseconds { probes.append("\(Self.duration(p50)) udp") }
            if !probes.isEmpty { parts.append("probes p50 " + probes.joined(separator: ", ")) }
        } else if let messagesEchoed {
            var text = "\(messagesEchoed) echoed"
            if let messagesLost { text += ", \(messagesLost) lost" }
            if let p50 = roundTripP50Nanoseconds { text += String(format: ", p50 %.1f us", Double(p50) / 1e3) }
            if let p99 = roundTripP99Nanoseconds { text += String(format: ", p99 %.1f us", Double(p99) / 1e3) }
            parts.append(text)
        }
        let omission = omitted == true ? " (omitted)" : ""
        let phase = self.phase.map { "\($0): " } ?? ""
        return String(format: "[%6.1f-%6.1f s] ", startSeconds, endSeconds) + phase + parts.joined(separator: ", ")
            + omission
    }

    /// A round trip in microseconds under a millisecond, else in milliseconds: "81.2 us", "142.3 ms".
    ///
    /// - Parameter nanoseconds: the round trip.
    /// - Returns: its text.
    public static func duration(_ nanoseconds: UInt64) -> String {
        nanoseconds < 1_000_000
            ? String(format: "%.1f us", Double(nanoseconds) / 1e3)
            : String(format: "%.1f ms", Double(nanoseconds) / 1e6)
    }
}
