/// The stream test's section of a result document (`streams`): every stream, and the figures of all of
/// them together. Times are nanoseconds, throughput bytes per second.
public struct StreamTestResult: Codable, Hashable, Sendable {
    /// Streams opened (`--streams`).
    public var streamCount: Int
    /// Bytes per stream (`--bytes`).
    public var bytesPerStream: Int
    /// Streams whose echo came back whole and intact.
    public var completed: Int
    /// Streams whose echo differed from what was sent.
    public var corrupted: Int
    /// Streams that failed (cancelled, refused, connection closed).
    public var failed: Int
    /// Streams still running when `--duration` ran out.
    public var timedOut: Int
    /// Bytes written, all streams.
    public var sentBytes: Int
    /// Bytes of echo read back, all streams (one-way: bytes the reflector says it read).
    public var echoedBytes: Int
    /// The first stream's start to the last echo byte of any.
    public var durationNanoseconds: UInt64
    /// Runner to reflector, all streams: `sentBytes` from the first start to the last `finish()`.
    public var sentBytesPerSecond: Double
    /// Reflector to runner, all streams: `echoedBytes` from the first start to the last echo byte (0 one-way).
    public var receivedBytesPerSecond: Double
    /// One-way only: the bytes the reflector read, all streams, from the first start to the last receipt.
    public var deliveredBytesPerSecond: Double?
    /// Each stream's start to its echo's first byte, over the streams.
    public var timeToFirstByte: LatencySummary
    /// Every stream, by index.
    public var streams: [StreamResult]

    /// Sums up the streams.
    ///
    /// - Parameters:
    ///   - streams: every stream's result.
    ///   - bytesPerStream: the bytes planned per stream.
    ///   - firstStart: the first stream's start, on the monotonic clock.
    ///   - lastWrite: the last `finish()`, on the monotonic clock.
    ///   - lastEcho: the last echo byte (one-way: the last receipt), on the monotonic clock.
    ///   - oneWay: whether the streams were read by the reflector rather than echoed.
    public init(
        streams: [StreamResult],
        bytesPerStream: Int,
        firstStart: UInt64,
        lastWrite: UInt64,
        lastEcho: UInt64,
        oneWay: Bool = false
    ) {
        self.streams = streams
        self.bytesPerStream = bytesPerStream
        streamCount = streams.count
        completed = streams.filter { $0.outcome == .completed }.count
        corrupted = streams.filter { $0.outcome == .corrupted }.count
        failed = streams.filter { $0.outcome == .failed }.count
        timedOut = streams.filter { $0.outcome == .timedOut }.count
        sentBytes = streams.reduce(0) { $0 + $1.sentBytes }
        echoedBytes = streams.reduce(0) { $0 + $1.echoedBytes }
        durationNanoseconds = lastEcho > firstStart ? lastEcho - firstStart : 0
        sentBytesPerSecond = lastWrite > firstStart ? Double(sentBytes) / (Double(lastWrite - firstStart) / 1e9) : 0
        let rate = durationNanoseconds > 0 ? Double(echoedBytes) / (Double(durationNanoseconds) / 1e9) : 0
        receivedBytesPerSecond = oneWay ? 0 : rate
        deliveredBytesPerSecond = oneWay ? rate : nil
        var recorder = LatencyRecorder()
        for case let time? in streams.map(\.timeToFirstByteNanoseconds) { recorder.record(time) }
        timeToFirstByte = recorder.summary
    }
}
