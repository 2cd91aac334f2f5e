/// How the link to one peer is doing, as the kernel sees its TCP connection (Linux's `TCP_INFO`) and the
/// session its unreliable path: a snapshot from ``Session/linkReport(for:)``.
///
/// An app can adapt to it, as to the link reports Apple's Wi-Fi Aware gives: send smaller pictures when the
/// round trip grows or retransmissions climb, fewer datagrams when they are dropped before leaving. The
/// figures are the connection's since it was made, the round trips smoothed by the kernel.
public struct LinkReport: Sendable, Hashable {
    /// The smoothed round trip of the connection.
    public var smoothedRoundTrip: Duration
    /// Its mean deviation.
    public var roundTripVariation: Duration
    /// The least round trip seen on the connection; nil when the kernel does not say.
    public var minimumRoundTrip: Duration?
    /// Segments sent again.
    public var retransmittedSegments: Int
    /// The congestion window, in segments of ``segmentSize`` bytes.
    public var congestionWindowSegments: Int
    /// The segment size the connection sends, in bytes.
    public var segmentSize: Int
    /// Bytes sent and not yet acknowledged (segments in flight times the segment size, about).
    public var bytesInFlight: Int
    /// Bytes handed to the kernel and not yet sent.
    public var notSentBytes: Int
    /// The most recent delivery rate the kernel measured, in bytes a second; nil when it does not say.
    public var deliveryRateBytesPerSecond: Double?
    /// Bytes sent on the connection, those sent again included.
    public var bytesSent: UInt64
    /// Bytes sent again.
    public var bytesRetransmitted: UInt64
    /// Bytes received on the connection.
    public var bytesReceived: UInt64
    /// The session's unreliable path, all its peers together.
    public var datagrams: DatagramStatistics
    /// The congestion control the connection runs (`cubic`, `bbr`…); nil when the system does not tell.
    public var congestionControl: String?

    /// Makes a report from its figures.
    public init(
        smoothedRoundTrip: Duration,
        roundTripVariation: Duration,
        minimumRoundTrip: Duration?,
        retransmittedSegments: Int,
        congestionWindowSegments: Int,
        segmentSize: Int,
        bytesInFlight: Int,
        notSentBytes: Int,
        deliveryRateBytesPerSecond: Double?,
        bytesSent: UInt64,
        bytesRetransmitted: UInt64,
        bytesReceived: UInt64,
        datagrams: DatagramStatistics,
        congestionControl: String? = nil
    ) {
        self.smoothedRoundTrip = smoothedRoundTrip
        self.roundTripVariation = roundTripVariation
        self.minimumRoundTrip = minimumRoundTrip
        self.retransmittedSegments = retransmittedSegments
        self.congestionWindowSegments = congestionWindowSegments
        self.segmentSize = segmentSize
        self.bytesInFlight = bytesInFlight
        self.notSentBytes = notSentBytes
        self.deliveryRateBytesPerSecond = deliveryRateBytesPerSecond
        self.bytesSent = bytesSent
        self.bytesRetransmitted = bytesRetransmitted
        self.bytesReceived = bytesReceived
        self.datagrams = datagrams
        self.congestionControl = congestionControl
    }
}
