/// How fast one size's measured messages went each way: bytes over the measured phase, from the
/// first send to the last echo (or the last timeout).
public struct ThroughputSummary: Codable, Hashable, Sendable {
    /// Runner to reflector: payload bytes sent per second.
    public var sentBytesPerSecond: Double
    /// Reflector to runner: payload bytes of intact echoes per second.
    public var receivedBytesPerSecond: Double
    /// Intact echoes per second.
    public var messagesPerSecond: Double

    /// Makes a summary.
    ///
    /// - Parameters:
    ///   - sentBytesPerSecond: payload bytes sent per second.
    ///   - receivedBytesPerSecond: payload bytes echoed intact per second.
    ///   - messagesPerSecond: intact echoes per second.
    public init(sentBytesPerSecond: Double = 0, receivedBytesPerSecond: Double = 0, messagesPerSecond: Double = 0) {
        self.sentBytesPerSecond = sentBytesPerSecond
        self.receivedBytesPerSecond = receivedBytesPerSecond
        self.messagesPerSecond = messagesPerSecond
    }
}
