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
    /// TCP connect of the raw-tcp test.
    public var rawConnectNanoseconds: UInt64?
    /// The runner session's encryption preference ("required", "optional" or "none").
    public var encryption: String?
    /// How the session's link was secured: "TLS 1.3, TLS_AES_128_GCM_SHA256", or "plain (not encrypted)".
    public var linkSecurity: String?

    /// Makes a report; the timings start unset.
    ///
    /// - Parameter method: DNS-SD or direct.
    public init(method: ConnectionMethod) {
        self.method = method
    }
}
