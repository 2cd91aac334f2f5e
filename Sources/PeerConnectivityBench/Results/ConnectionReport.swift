import PeerConnectivity

/// How the runner reached the reflector, and how long each step took (monotonic nanoseconds).
public struct ConnectionReport: Codable, Hashable, Sendable {
    /// DNS-SD or direct.
    public var method: ConnectionMethod
    /// The DNS-SD service type browsed ("p2p-bench" for `_p2p-bench._tcp`), for DNS-SD.
    public var serviceType: String?
    /// The reflector's display name.
    public var reflectorName: String?
    /// Where the session connected: "host:port" for a direct connection; nil when DNS-SD chose.
    public var sessionAddress: String?
    /// Where the raw-tcp test connected: "host:port".
    public var rawAddress: String?
    /// Browser start to the reflector found (DNS-SD).
    public var browseToFoundNanoseconds: UInt64?
    /// Invitation sent to the session connected (`invitePeer` or `connectPeer`).
    public var inviteToConnectedNanoseconds: UInt64?
    /// Session connected to the reflector's hello received.
    public var connectedToHelloNanoseconds: UInt64?
    /// TCP connect of the raw-tcp test, with its TLS handshake when it is encrypted.
    public var rawConnectNanoseconds: UInt64?
    /// The runner session's encryption preference ("required", "optional" or "none").
    public var encryption: String?
    /// How the session's link (for raw-tcp, the baseline's connection) was secured: "TLS 1.3,
    /// TLS_AES_128_GCM_SHA256", or "plain (not encrypted)".
    public var linkSecurity: String?
    /// The runner's end of the session's connection, "address:port".
    public var localAddress: String?
    /// The reflector's end of it, "address:port" (for DNS-SD, the address the name resolved to).
    public var remoteAddress: String?
    /// The runner's network interface the connection went through ("eth0", "lo").
    public var interface: String?
    /// The flow-control window of the streams the runner reads (`--reverse`, `--bidir`, echoes), bytes.
    public var streamWindow: Int?
    /// The flow-control window of the streams the reflector reads from the runner, bytes, as it said.
    public var reflectorStreamWindow: Int?
    /// The bound on the unsent bytes of this runner's connection at the reflector (`TCP_NOTSENT_LOWAT`), as its
    /// hello said; nil when none was set.
    public var reflectorNotSentLowWatermark: Int?
    /// The congestion control the reflector's side of this runner's connection ran, as its hello said (it
    /// sends with it in a reverse or download test); nil from a reflector that does not say.
    public var reflectorCongestionControl: String?
    /// The other runners the reflector served while it served this run's session, each "NAME (ADDRESS)", as
    /// its report at the run's end named them (at most 1,024); nil when it did not say (an older reflector, or
    /// a run that failed).
    public var sharedWith: [String]?
    /// How many others in all.
    public var sharedWithCount: Int?
    /// The run's session's connection as this runner's kernel saw it at the run's end (`TCP_INFO`: round trip,
    /// retransmissions, window, bytes); nil where the system does not tell, or the run ended without it.
    public var link: LinkSample?
    /// The same connection as the reflector's kernel saw it at the run's end, as its report said (the sender's
    /// view in a reverse test); nil when it did not say.
    public var reflectorLink: LinkSample?
    /// The same connection as the reflector's kernel saw it over the run, a sample a second since this runner
    /// connected (thinned to every 2, 4, … s past 600), as its report said, as iperf3's `--get-server-output`
    /// gives the server's view; nil when it did not say.
    public var reflectorLinks: [TimedLinkSample]?

    /// Makes a report; the timings start unset.
    ///
    /// - Parameter method: DNS-SD or direct.
    public init(method: ConnectionMethod) {
        self.method = method
    }

    /// A report of how a run set out to reach its target, before anything was reached.
    ///
    /// - Parameter configuration: the run's configuration.
    public init(setOutFor configuration: RunnerConfiguration) {
        switch configuration.target {
        case .discover(let name):
            self.init(method: .dnsSD)
            serviceType = configuration.serviceType
            reflectorName = name
        case .direct(let host, let port):
            self.init(method: .direct)
            sessionAddress = ConnectionEndpoints.hostPort(host, port)
        }
        encryption = configuration.encryption.description
    }
}
