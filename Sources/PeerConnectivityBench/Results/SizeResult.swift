/// The measured messages of one size: what became of each, round-trip times and throughput.
///
/// Every message sent is accounted for: `sent == echoed + lost + corrupted`. `duplicated`,
/// `reordered`, `late` and `stray` count arrivals beside that.
public struct SizeResult: Codable, Hashable, Sendable {
    /// The message size in bytes.
    public var size: Int
    /// Measured messages planned (``TestPlan/count``).
    public var planned: Int
    /// Measured messages sent (fewer than planned when ``TestPlan/durationSeconds`` ran out).
    public var sent: Int
    /// Echoes that came back in time, intact.
    public var echoed: Int
    /// Messages whose echo did not come back within the timeout.
    public var lost: Int
    /// Echoes that came back in time with the wrong size or bytes.
    public var corrupted: Int
    /// Echoes of a message already answered (or, for messages under 8 bytes, matching none in flight).
    public var duplicated: Int
    /// Intact echoes that came after the echo of a message sent later.
    public var reordered: Int
    /// Echoes that came after their message had been counted lost.
    public var late: Int
    /// Arrivals that name no message of this size's measured phase (from its warm-up or an earlier size).
    public var stray: Int
    /// Warm-up messages sent before the measured ones, and how many of them came back intact.
    public var warmupSent: Int
    /// Warm-up echoes that came back in time, intact.
    public var warmupEchoed: Int
    /// The measured phase, from the first send to the last echo or timeout, in nanoseconds.
    public var durationNanoseconds: UInt64
    /// Round-trip times of the intact echoes.
    public var roundTrip: LatencySummary
    /// Throughput each way.
    public var throughput: ThroughputSummary
    /// `--mode unreliable` only: arrivals (echoes, duplicates included) that came on the connection
    /// rather than in a UDP datagram, as the library does until both sides know each other's UDP endpoint.
    public var arrivedOnConnection: Int?
    /// Every measured message, in order of sequence number; only with `--samples`.
    public var samples: [MessageSample]?
    /// RFC 3550's interarrival jitter of the echoes' transit times, in nanoseconds: the smoothed mean of
    /// how much each echo's round trip differs from the one before (nil below two echoes).
    public var jitterNanoseconds: Double?

    /// Makes a result; the counters default to zero.
    ///
    /// - Parameters:
    ///   - size: the message size.
    ///   - planned: messages planned.
    public init(size: Int, planned: Int) {
        self.size = size
        self.planned = planned
        sent = 0
        echoed = 0
        lost = 0
        corrupted = 0
        duplicated = 0
        reordered = 0
        late = 0
        stray = 0
        warmupSent = 0
        warmupEchoed = 0
        durationNanoseconds = 0
        roundTrip = LatencySummary()
        throughput = ThroughputSummary()
        arrivedOnConnection = nil
        samples = nil
    }
}
