/// How a phase's round trips become round trips per minute (RPM), as the IETF draft "Responsiveness under
/// Working Conditions" scores a link: each kind of probe's round trips are averaged without their slowest
/// 5% (a trimmed mean), the foreign and self means weigh half each, and 60 s divided by that is the RPM.
public enum ResponsivenessScore {
    /// The statistic behind every ``ResponsivenessPhase/rpm``, as the document states it.
    public static let statistic =
        "60 s / (half the foreign probes' mean + half the self probes' mean), each mean without the slowest 5%"

    /// The share of the slowest round trips left out of each mean.
    static let trimmedShare = 0.05

    /// The mean of `samples` without their slowest 5%; nil for none.
    ///
    /// - Parameter samples: round trips in nanoseconds.
    /// - Returns: the trimmed mean in nanoseconds.
    public static func trimmedMean(_ samples: [UInt64]) -> Double? {
        guard !samples.isEmpty else { return nil }
        let kept = samples.sorted().prefix(max(1, Int((Double(samples.count) * (1 - trimmedShare)).rounded(.up))))
        return kept.reduce(0.0) { $0 + Double($1) } / Double(kept.count)
    }

    /// The round trips per minute of a phase; nil when no probe came back. With one kind only, that kind
    /// alone counts.
    ///
    /// - Parameters:
    ///   - foreign: the foreign probes' trimmed mean, in nanoseconds.
    ///   - selfFlow: the self probes' trimmed mean, in nanoseconds.
    /// - Returns: the RPM.
    public static func rpm(foreign: Double?, selfFlow: Double?) -> Double? {
        let roundTrip: Double
        switch (foreign, selfFlow) {
        case (let foreign?, let selfFlow?): roundTrip = (foreign + selfFlow) / 2
        case (let one?, nil), (nil, let one?): roundTrip = one
        case (nil, nil): return nil
        }
        return 60e9 / max(roundTrip, 1)
    }

    /// The band an RPM falls in: `low` below 300 (a loaded round trip over 200 ms), `medium` below 1,000
    /// (over 60 ms), `high` from 1,000.
    ///
    /// - Parameter rpm: round trips per minute.
    /// - Returns: the band's name.
    public static func band(_ rpm: Double) -> String {
        rpm < 300 ? "low" : rpm < 1_000 ? "medium" : "high"
    }
}
