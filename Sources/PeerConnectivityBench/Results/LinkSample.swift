import PeerConnectivity

/// A connection's figures as the runner's kernel kept them (`Session.linkReport(for:)`, from `TCP_INFO`), in
/// the document's units: nanoseconds and bytes.
public struct LinkSample: Codable, Hashable, Sendable {
    /// The smoothed round trip and its mean deviation.
    public var smoothedRoundTripNanoseconds: UInt64
    public var roundTripVariationNanoseconds: UInt64
    /// The least round trip seen; nil when the kernel does not say.
    public var minimumRoundTripNanoseconds: UInt64?
    /// Segments sent again, and their bytes.
    public var retransmittedSegments: Int
    public var bytesRetransmitted: UInt64
    /// The congestion window, in segments of `segmentSize` bytes.
    public var congestionWindowSegments: Int
    public var segmentSize: Int
    /// Bytes in flight (unacknowledged), and handed to the kernel but not yet sent.
    public var bytesInFlight: Int
    public var notSentBytes: Int
    /// The kernel's latest delivery rate, bytes a second; nil when it does not say.
    public var deliveryRateBytesPerSecond: Double?
    /// Bytes sent (retransmissions included) and received over the connection's life.
    public var bytesSent: UInt64
    public var bytesReceived: UInt64
    /// The congestion control the connection ran; nil when the system does not tell.
    public var congestionControl: String?

    /// The sample of a library report.
    ///
    /// - Parameter report: the session's report for the reflector.
    public init(_ report: LinkReport) {
        smoothedRoundTripNanoseconds = report.smoothedRoundTrip.wholeNanoseconds
        roundTripVariationNanoseconds = report.roundTripVariation.wholeNanoseconds
        minimumRoundTripNanoseconds = report.minimumRoundTrip?.wholeNanoseconds
        retransmittedSegments = report.retransmittedSegments
        bytesRetransmitted = report.bytesRetransmitted
        congestionWindowSegments = report.congestionWindowSegments
        segmentSize = report.segmentSize
        bytesInFlight = report.bytesInFlight
        notSentBytes = report.notSentBytes
        deliveryRateBytesPerSecond = report.deliveryRateBytesPerSecond
        bytesSent = report.bytesSent
        bytesReceived = report.bytesReceived
        congestionControl = report.congestionControl
    }
}
