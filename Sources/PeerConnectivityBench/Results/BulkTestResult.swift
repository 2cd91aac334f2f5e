/// The bulk test's figures: each direction that ran.
public struct BulkTestResult: Codable, Hashable, Sendable {
    /// Streams per direction (`--parallel`).
    public var streamCount: Int
    /// How long each writer wrote, in seconds (`--time`).
    public var timeSeconds: Double
    /// Runner to reflector; nil with `--reverse`.
    public var forward: BulkDirection?
    /// Reflector to runner; with `--reverse` or `--bidir`.
    public var reverse: BulkDirection?
    /// With `-u`: datagrams one way at a bitrate, instead of streams.
    public var datagrams: DatagramBulkResult?

    /// Makes the figures.
    ///
    /// - Parameters:
    ///   - streamCount: streams per direction.
    ///   - timeSeconds: the writing time.
    ///   - forward: runner to reflector.
    ///   - reverse: reflector to runner.
    public init(streamCount: Int, timeSeconds: Double, forward: BulkDirection?, reverse: BulkDirection?) {
        self.streamCount = streamCount
        self.timeSeconds = timeSeconds
        self.forward = forward
        self.reverse = reverse
    }
}
