/// What a session's unreliable path has done since the session started, summed over its peers: a snapshot
/// from ``Session/datagramStatistics``.
///
/// An app that sends at a rate (audio, positions) can read it now and again: `notSentQueueFull` growing
/// means this host cannot put the datagrams on the network as fast as they are sent (a slow or congested
/// interface), which a blocking UDP socket would have made the sender wait for.
public struct DatagramStatistics: Sendable, Hashable, Codable {
    /// Datagrams handed to the UDP socket.
    public var sent: Int
    /// Unreliable messages dropped before they left this host: the UDP socket's buffer (and SwiftNIO's
    /// queue before it) was full.
    public var notSentQueueFull: Int
    /// Unreliable messages that went on the TCP connection instead, before the peer's UDP path was open.
    public var sentOnConnection: Int
    /// Datagrams received and delivered (or queued for the application).
    public var received: Int
    /// Datagrams received and dropped: an unknown token, a sender address that does not match, too short,
    /// or failing authentication.
    public var rejected: Int
    /// Datagrams received and dropped because the application had not taken enough of the session's events.
    public var droppedUnread: Int

    /// Makes a snapshot from its counts.
    public init(
        sent: Int = 0,
        notSentQueueFull: Int = 0,
        sentOnConnection: Int = 0,
        received: Int = 0,
        rejected: Int = 0,
        droppedUnread: Int = 0
    ) {
        self.sent = sent
        self.notSentQueueFull = notSentQueueFull
        self.sentOnConnection = sentOnConnection
        self.received = received
        self.rejected = rejected
        self.droppedUnread = droppedUnread
    }
}
