/// One kind of latency probe in one phase of the responsiveness test.
public struct ProbeResult: Codable, Hashable, Sendable {
    /// Probes sent in the phase, after its omitted first seconds.
    public var sent: Int
    /// Probes sent in its omitted first seconds (the load ramping up) that came back, left out of the rest.
    public var omitted: Int
    /// Their echoes that came back (before the test's end and its grace).
    public var answered: Int
    /// The round trips of those that came back.
    public var roundTrip: LatencySummary
    /// Their mean without the slowest 5%, in nanoseconds (the RPM's input); nil for none.
    public var trimmedMeanNanoseconds: Double?

    /// The result of probes sent in one phase.
    ///
    /// - Parameters:
    ///   - sent: probes sent.
    ///   - roundTrips: the round trips of those answered, in nanoseconds.
    ///   - omitted: probes of the omitted seconds that came back.
    public init(sent: Int, roundTrips: [UInt64], omitted: Int = 0) {
        self.sent = sent
        self.omitted = omitted
        answered = roundTrips.count
        roundTrip = LatencySummary(nanoseconds: roundTrips)
        trimmedMeanNanoseconds = ResponsivenessScore.trimmedMean(roundTrips)
    }
}
