/// One direction of a bulk test: what its writers wrote and its readers read and checked.
public struct BulkDirection: Codable, Hashable, Sendable {
    /// Bytes the writers handed to their streams.
    public var sentBytes: Int
    /// Bytes the readers received, each checked against the pattern.
    public var receivedBytes: Int
    /// From the first write to the end of the last stream at the reader, in seconds.
    public var seconds: Double
    /// `receivedBytes` over `seconds`: the link's throughput in this direction; with `--omit`, the bytes
    /// after the omitted seconds over the time after them.
    public var bytesPerSecond: Double
    /// With `--omit`: the bytes left out of the rate, those the runner had written (forward) or read
    /// (reverse) when the omitted seconds ended.
    public var omittedBytes: Int?
    /// With `--omit`: the seconds left out of the rate, from the first write.
    public var omittedSeconds: Double?
    /// Forward streams: the bytes the reflector read in each second from each stream's first byte, all
    /// streams together, as it reported them (iperf3's `--get-server-output`); nil when it did not.
    public var reflectorBytesPerSecond: [Int]?
    /// Streams whose bytes differed from the pattern.
    public var corruptedStreams: Int
    /// Streams that did not end normally.
    public var failedStreams: Int
    /// Why streams failed, one entry per failed stream.
    public var errors: [String]

    /// Makes a direction's figures; the rate is derived.
    ///
    /// - Parameters:
    ///   - sentBytes: bytes written.
    ///   - receivedBytes: bytes read and checked.
    ///   - seconds: the time they took.
    ///   - corruptedStreams: streams with wrong bytes.
    ///   - failedStreams: streams that failed.
    ///   - errors: why.
    public init(
        sentBytes: Int,
        receivedBytes: Int,
        seconds: Double,
        corruptedStreams: Int = 0,
        failedStreams: Int = 0,
        errors: [String] = []
    ) {
        self.sentBytes = sentBytes
        self.receivedBytes = receivedBytes
        self.seconds = seconds
        self.bytesPerSecond = seconds > 0 ? Double(receivedBytes) / seconds : 0
        self.corruptedStreams = corruptedStreams
        self.failedStreams = failedStreams
        self.errors = errors
    }

    /// The same figures with the first `seconds` left out of the rate: `bytes` of the received ones, those
    /// the far end had by then, as iperf3's `-O` leaves out slow start. Nothing changes when the direction
    /// did not last longer than `seconds` or had fewer bytes.
    ///
    /// - Parameters:
    ///   - bytes: the bytes moved in the omitted seconds.
    ///   - seconds: the omitted seconds.
    /// - Returns: the figures, the rate over what followed.
    public func omitting(_ bytes: Int, over seconds: Double) -> BulkDirection {
        guard seconds > 0, seconds < self.seconds, bytes <= receivedBytes else { return self }
        var result = self
        result.omittedBytes = bytes
        result.omittedSeconds = seconds
        result.bytesPerSecond = Double(receivedBytes - bytes) / (self.seconds - seconds)
        return result
    }

    /// Several flows of one direction as one: their bytes, failures and errors added up, over the longest
    /// one's time; nil for none.
    ///
    /// - Parameter flows: each flow's figures.
    /// - Returns: the direction's.
    public static func sum(_ flows: [BulkDirection]) -> BulkDirection? {
        guard !flows.isEmpty else { return nil }
        var sum = BulkDirection(
            sentBytes: flows.map(\.sentBytes).reduce(0, +),
            receivedBytes: flows.map(\.receivedBytes).reduce(0, +),
            seconds: flows.map(\.seconds).max() ?? 0,
            corruptedStreams: flows.map(\.corruptedStreams).reduce(0, +),
            failedStreams: flows.map(\.failedStreams).reduce(0, +),
            errors: flows.flatMap(\.errors)
        )
        let views = flows.compactMap(\.reflectorBytesPerSecond)
        if !views.isEmpty {
            sum.reflectorBytesPerSecond = (0..<(views.map(\.count).max() ?? 0)).map { second in
                views.reduce(0) { $0 + ($1.indices.contains(second) ? $1[second] : 0) }
            }
        }
        return sum
    }
}
