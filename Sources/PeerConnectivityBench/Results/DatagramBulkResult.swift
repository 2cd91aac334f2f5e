/// Datagrams one way at a set bitrate (`--test bulk -u -b RATE -l LENGTH`), as iperf3's UDP test: what the
/// runner sent on its schedule and what the reflector received.
public struct DatagramBulkResult: Codable, Hashable, Sendable {
    /// Each datagram's bytes, its 16-byte header included.
    public var length: Int
    /// The bitrate asked for, in bits a second.
    public var targetBitsPerSecond: Double
    /// The sending time asked for, in seconds (`--time`).
    public var seconds: Double
    /// Datagrams sent: handed to the runner's UDP socket.
    public var sentDatagrams: Int
    /// Datagrams of the schedule dropped on the runner's host because its UDP socket's buffer was full: the
    /// host could not put them on the network that fast (a blocking sender, as iperf3's, would have waited
    /// instead). Not counted as sent nor lost. Nil in documents written before it was counted.
    public var notSentDatagrams: Int?
    /// Their bytes.
    public var sentBytes: Int
    /// `sentBytes` over `seconds`, in bits a second.
    public var sentBitsPerSecond: Double
    /// Datagrams the reflector received once each.
    public var receivedDatagrams: Int
    /// Their bytes.
    public var receivedBytes: Int
    /// `receivedBytes` over `seconds`, in bits a second.
    public var receivedBitsPerSecond: Double
    /// Datagrams sent and never received.
    public var lostDatagrams: Int
    /// `lostDatagrams` over `sentDatagrams`, in percent.
    public var lostPercent: Double
    /// Datagrams that came after a later one.
    public var outOfOrder: Int
    /// Datagrams received more than once.
    public var duplicates: Int
    /// RFC 3550's interarrival jitter at the reflector, in nanoseconds.
    public var jitterNanoseconds: Double
    /// Bytes the reflector received in each second from its first arrival.
    public var receivedBytesPerSecond: [Int]
    /// How far the sender fell behind its schedule at most, in nanoseconds (a starved sender sends late).
    public var maximumLatenessNanoseconds: UInt64

    /// The figures of `sent` datagrams of `length` bytes over `seconds` and the reflector's receipt.
    ///
    /// - Parameters:
    ///   - length: each datagram's bytes.
    ///   - targetBitsPerSecond: the bitrate asked for.
    ///   - seconds: the sending time.
    ///   - sent: datagrams sent.
    ///   - notSent: datagrams of the schedule dropped on this host, its socket's buffer full.
    ///   - receipt: what the reflector counted.
    ///   - maximumLatenessNanoseconds: the sender's worst lateness.
    public init(
        length: Int,
        targetBitsPerSecond: Double,
        seconds: Double,
        sent: Int,
        notSent: Int = 0,
        receipt: DatagramReceipt,
        maximumLatenessNanoseconds: UInt64
    ) {
        self.length = length
        self.targetBitsPerSecond = targetBitsPerSecond
        self.seconds = seconds
        sentDatagrams = sent
        notSentDatagrams = notSent
        sentBytes = sent * length
        sentBitsPerSecond = seconds > 0 ? Double(sentBytes * 8) / seconds : 0
        receivedDatagrams = receipt.unique
        receivedBytes = receipt.unique * length
        receivedBitsPerSecond = seconds > 0 ? Double(receivedBytes * 8) / seconds : 0
        lostDatagrams = max(sent - receipt.unique, 0)
        lostPercent = sent > 0 ? Double(lostDatagrams) * 100 / Double(sent) : 0
        outOfOrder = receipt.outOfOrder
        duplicates = receipt.duplicates
        jitterNanoseconds = receipt.jitterNanoseconds
        receivedBytesPerSecond = receipt.bytesPerSecond
        self.maximumLatenessNanoseconds = maximumLatenessNanoseconds
    }
}
