/// What a resource's sender did, for measuring it (``ResourceTransfer/statistics``): blocks sent and
/// resumed, bytes that crossed, and the time spent reading and hashing the file.
///
/// Reading and hashing run on the library's file threads, several blocks at once and beside the network, so
/// their times are summed over threads: they can add up to more than the transfer took.
public struct ResourceTransferStatistics: Sendable, Hashable, Codable {
    /// The resource's blocks (1 MiB each but the last).
    public var blocks: Int
    /// Blocks written to the connection, over every attempt (a block sent twice counts twice).
    public var blocksSent: Int
    /// Blocks the receiver held when the resource was last opened (from an interrupted transfer, or
    /// from this one before a damaged block or a drop), which did not cross again then.
    public var blocksResumed: Int
    /// Bytes of the file written to the connection, over every attempt, counted a block at a time (as
    /// its last chunk is queued).
    public var bytesSent: UInt64
    /// Bytes of ``blocksResumed``.
    public var bytesResumed: UInt64
    /// Times the resource was opened again: after a damaged block, or on a resumed link.
    public var reopenings: Int
    /// Seconds spent reading the file, summed over the blocks.
    public var readSeconds: Double
    /// Seconds spent hashing the file's blocks (XXH64 or XXH3-64), summed over the blocks.
    public var hashSeconds: Double
    /// The hash of the block digests, as docs/PROTOCOL.md names it: "XXH3-64" when both peers offered it in
    /// their handshake, else "XXH64"; `nil` in statistics decoded from a document written before it was
    /// recorded, and for a folder none of whose files has started.
    public var blockDigest: String?

    /// Adds what another transfer did (a folder's files), but its block count, which the folder knows.
    ///
    /// - Parameter other: a file's statistics.
    public mutating func add(_ other: ResourceTransferStatistics) {
        blocksSent += other.blocksSent
        blocksResumed += other.blocksResumed
        bytesSent += other.bytesSent
        bytesResumed += other.bytesResumed
        reopenings += other.reopenings
        readSeconds += other.readSeconds
        hashSeconds += other.hashSeconds
        blockDigest = blockDigest ?? other.blockDigest
    }

    /// Statistics of a transfer that has done nothing yet.
    ///
    /// - Parameter blocks: the resource's block count.
    public init(blocks: Int) {
        self.blocks = blocks
        blocksSent = 0
        blocksResumed = 0
        bytesSent = 0
        bytesResumed = 0
        reopenings = 0
        readSeconds = 0
        hashSeconds = 0
    }
}
