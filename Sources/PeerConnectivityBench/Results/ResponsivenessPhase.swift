/// One phase of the responsiveness test: the load it ran, the throughput it reached each way, the probes'
/// round trips beside it, and the RPM they give.
public struct ResponsivenessPhase: Codable, Hashable, Sendable {
    /// The phases, in the order they run.
    public enum Name: String, Codable, CaseIterable, Sendable {
        /// No load: the link's round trip at rest.
        case idle
        /// The reflector writes the load flows, the runner reads them.
        case download
        /// The runner writes the load flows, the reflector reads them.
        case upload
        /// Both at once, each on its own flows.
        case both
    }

    /// Which phase.
    public var name: Name
    /// How long it lasted, from its start to the end of its last load flow at the reader, in seconds.
    public var seconds: Double
    /// Reflector to runner (download and both).
    public var download: BulkDirection?
    /// Runner to reflector (upload and both).
    public var upload: BulkDirection?
    /// Probes on a connection of their own.
    public var foreign: ProbeResult
    /// Probes inside the first load flow (none in the idle phase).
    public var selfProbes: ProbeResult
    /// Probes as datagrams on the foreign probes' session's UDP path (``ProbeKind/datagram``); nil when that
    /// path was not open, and in documents written before they were sent. Not in the RPM, which is the
    /// draft's (connections' round trips); the round trip of the link's queues as ping sees it.
    public var datagramProbes: ProbeResult?
    /// Each load flow's connection as the runner's kernel saw it at the phase's end (`TCP_INFO`), in flow
    /// order, the first carrying the self probes: how the flows shared the link (round trips, windows,
    /// retransmissions); nil for the idle phase, where the system does not tell, and in older documents.
    public var loadLinks: [LinkSample]?
    /// Round trips per minute (``ResponsivenessScore/statistic``); nil when no probe came back.
    public var rpm: Double?
    /// The RPM's band: low, medium or high (``ResponsivenessScore/band(_:)``).
    public var rpmBand: String?

    /// Makes a phase's figures; the RPM and its band are derived from the probes.
    ///
    /// - Parameters:
    ///   - name: the phase.
    ///   - seconds: its length.
    ///   - download: reflector to runner.
    ///   - upload: runner to reflector.
    ///   - foreign: the foreign probes.
    ///   - selfProbes: the self probes.
    ///   - datagramProbes: the datagram probes, when they were sent.
    public init(
        name: Name,
        seconds: Double,
        download: BulkDirection?,
        upload: BulkDirection?,
        foreign: ProbeResult,
        selfProbes: ProbeResult,
        datagramProbes: ProbeResult? = nil
    ) {
        self.name = name
        self.seconds = seconds
        self.download = download
        self.upload = upload
        self.foreign = foreign
        self.selfProbes = selfProbes
        self.datagramProbes = datagramProbes
        rpm = ResponsivenessScore.rpm(
            foreign: foreign.trimmedMeanNanoseconds,
            selfFlow: selfProbes.trimmedMeanNanoseconds
        )
        rpmBand = rpm.map(ResponsivenessScore.band)
    }

    private enum CodingKeys: String, CodingKey {
        case name, seconds, download, upload, foreign, rpm, rpmBand
        case selfProbes = "self"
        case datagramProbes = "udp"
        case loadLinks
    }
}
