/// One stream of the stream test: written by the runner, echoed by the reflector on a stream of the same
/// name, every byte of the echo checked. Times are nanoseconds from the stream's start (just before
/// `startStream`); throughput is bytes per second.
public struct StreamResult: Codable, Hashable, Sendable {
    /// The stream's number, 0 to `--streams` − 1.
    public var index: Int
    /// Its name (the echo's is the same).
    public var name: String
    /// Bytes planned (`--bytes`).
    public var bytes: Int
    /// Bytes written (accepted by `OutgoingStream.write`).
    public var sentBytes: Int
    /// Bytes of the echo read back (one-way: the bytes the reflector says it read).
    public var echoedBytes: Int
    /// What became of it.
    public var outcome: TransferOutcome
    /// The offset of the first byte of the echo that differs from what was sent (``TransferOutcome/corrupted``).
    public var firstMismatchOffset: Int?
    /// Why it failed, when it did.
    public var error: String?
    /// Start to the echo's first byte.
    public var timeToFirstByteNanoseconds: UInt64?
    /// Start to `finish()` after the last write: the runner-to-reflector leg.
    public var writeNanoseconds: UInt64?
    /// Start to the echo's last byte (one-way: to the reflector's receipt).
    public var echoNanoseconds: UInt64?
    /// Runner to reflector: `sentBytes` over `writeNanoseconds`. Flow control lets a write return only
    /// while the reflector has read all but the last 256 KiB window, so this is the rate the reflector
    /// received at, to within a window.
    public var sentBytesPerSecond: Double
    /// Reflector to runner: `echoedBytes` over `echoNanoseconds` (0 one-way: nothing comes back).
    public var receivedBytesPerSecond: Double
    /// One-way only: the bytes the reflector read over the time until its receipt arrived; unlike
    /// `sentBytesPerSecond`, never above what the link delivered (it counts the receipt's trip too).
    public var deliveredBytesPerSecond: Double?

    /// Makes a result; nothing sent or received yet.
    ///
    /// - Parameters:
    ///   - index: the stream's number.
    ///   - name: its name.
    ///   - bytes: the bytes planned.
    public init(index: Int, name: String, bytes: Int) {
        self.index = index
        self.name = name
        self.bytes = bytes
        sentBytes = 0
        echoedBytes = 0
        outcome = .failed
        sentBytesPerSecond = 0
        receivedBytesPerSecond = 0
    }
}
