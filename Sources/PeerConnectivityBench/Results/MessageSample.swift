/// One measured message, kept with `--samples`: when it was sent and when its echo came back.
public struct MessageSample: Codable, Hashable, Sendable {
    /// The sequence number carried in the payload.
    public var sequence: UInt64
    /// The message size in bytes.
    public var size: Int
    /// When the send started, in nanoseconds of the monotonic clock since the run started
    /// (``BenchmarkDocument/startedAt``).
    public var sentNanoseconds: UInt64
    /// When the echo was read, on the same clock; nil for a lost message.
    public var receivedNanoseconds: UInt64?
    /// What became of it.
    public var outcome: MessageOutcome

    /// Makes a sample.
    ///
    /// - Parameters:
    ///   - sequence: the sequence number.
    ///   - size: the size in bytes.
    ///   - sentNanoseconds: the send time since the run started.
    ///   - receivedNanoseconds: the echo's arrival since the run started, nil when lost.
    ///   - outcome: what became of it.
    public init(
        sequence: UInt64,
        size: Int,
        sentNanoseconds: UInt64,
        receivedNanoseconds: UInt64?,
        outcome: MessageOutcome
    ) {
        self.sequence = sequence
        self.size = size
        self.sentNanoseconds = sentNanoseconds
        self.receivedNanoseconds = receivedNanoseconds
        self.outcome = outcome
    }
}
