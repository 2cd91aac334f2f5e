import Logging

extension Advertiser {
    /// Where an advertiser listens, and its limits.
    public struct Configuration: Sendable {
        /// The address the TCP listener binds: "0.0.0.0" (all IPv4 interfaces) by default,
        /// "127.0.0.1" for this host only.
        public var host: String = "0.0.0.0"
        /// The TCP port; 0 (the default) lets the system choose an ephemeral port.
        public var port: Int = 0
        /// Whether to register the DNS-SD service. `false` listens only, for peers that connect
        /// directly (``Session/connectPeer(host:port:withContext:timeout:)``) where multicast does not pass.
        public var publishesService: Bool = true
        /// Invitations handed out and not yet answered above which new ones are declined as busy.
        public var maximumPendingInvitations: Int = 16
        /// Connections still in their handshake above which new ones are closed at once.
        public var maximumPendingHandshakes: Int = 64
        /// How long a new connection has to say HELLO and send its INVITE.
        public var handshakeTimeout: Duration = .seconds(5)
        /// How the advertiser decides on an inviter's certificate before the invitation is delivered
        /// (after the binding rule): accept every bound certificate (default), pin keys, or ask the app.
        public var certificatePolicy: CertificatePolicy = .acceptBound
        /// Where the advertiser logs refused connections and DNS-SD failures.
        public var logger = Logger(label: "PeerConnectivity.Advertiser")

        /// The defaults: all interfaces, an ephemeral port, DNS-SD on, 16 pending invitations.
        public static var `default`: Configuration { Configuration() }

        /// Makes the default configuration; change its properties as needed.
        public init() {}
    }
}
