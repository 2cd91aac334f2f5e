/// What a run measures. Every test is echoed or confirmed by the reflector and accounted item by item.
public enum TestKind: String, Codable, CaseIterable, Sendable {
    /// Data messages through a PeerConnectivity ``PeerConnectivity/Session``, echoed by the reflector.
    case data
    /// The same plan over a raw TCP connection to the reflector's raw echo server (TLS unless plain): the baseline.
    case rawTCP = "raw-tcp"
    /// Resources (files) sent with `sendResource`; the reflector confirms each with its size and SHA-256.
    case resource
    /// A folder of many small files sent whole with `sendResource` (`--files` made from a fixed seed, or
    /// `--folder PATH`); the reflector confirms each with its files, bytes and ``FolderDigest``.
    case folder
    /// Byte streams opened with `startStream`; the reflector echoes each on a stream of the same name.
    case stream
    /// Throughput of the link as iperf3 measures it: `--parallel` streams written one way for `--time`
    /// seconds (`--reverse`: the reflector writes, `--bidir`: both), read and checked at the far end,
    /// reported every `--interval`.
    case bulk
    /// Latency under load, as Crusader and the IETF responsiveness draft measure it: phases idle, download,
    /// upload and both of `--time` seconds, `--parallel` load flows, probes on a connection of their own and
    /// inside the load; each phase's throughput, round trips and RPM.
    case responsiveness

    /// Whether the test sends messages of the plan's sizes (data, raw-tcp), as opposed to transfers.
    public var isMessageTest: Bool {
        self == .data || self == .rawTCP
    }
}
