import Logging
import NIOCore

extension Advertiser {
    /// Where an advertiser listens, and its limits.
    public struct Configuration: Sendable {
        /// The address the TCP listener binds: "::" (every interface, IPv6 and IPv4; IPv4 only where the
        /// system has no IPv6) by default, "0.0.0.0" for IPv4 only, "127.0.0.1" or "::1" for this host only.
        public var host: String = "::"
        /// The TCP port; 0 (the default) lets the system choose an ephemeral port.
        public var port: Int = 0
        /// Whether to register the DNS-SD service. `false` listens only, for peers that connect
        /// directly (``Session/connectPeer(host:port:withContext:timeout:)``) where multicast does not pass.
        public var publishesService: Bool = true
        /// Invitations handed out and not yet answered above which new ones are declined as busy.
        public var maximumPendingInvitations: Int = 16
        /// Connections still in their handshake (connected, INVITE not yet received) kept at most. A new
        /// connection is always admitted: above this the **oldest** pending one is closed (reason
        /// `DisconnectReason.overloaded`), so a flood of idle connections cannot lock a real peer out.
        public var maximumPendingHandshakes: Int = 64
        /// Connections from one source address kept in their handshake at most; above this the oldest
        /// from that address is closed, so one host cannot push out the others. A global IPv6 address
        /// counts as its network (``ipv6PrefixLength``).
        public var maximumPendingHandshakesPerAddress: Int = 16
        /// How long a new connection has to say HELLO and send its INVITE, counted from the moment it
        /// is accepted (bytes that trickle in do not extend it).
        public var handshakeTimeout: Duration = .seconds(5)
        /// The longest an invitation waits for the application's answer, whatever timeout the inviter
        /// asked for (an INVITE may ask for up to 49 days); then it is declined as timed out.
        public var maximumInvitationTimeout: Duration = .seconds(120)
        /// Unanswered invitations from one peer id at most; more are declined (`DisconnectReason.rateLimited`).
        public var maximumPendingInvitationsPerPeer: Int = 2
        /// Invitations one peer id may send at once (a token bucket refilled at ``invitationsPerSecondPerPeer``);
        /// more are declined (`DisconnectReason.rateLimited`) and never reach ``Advertiser/invitations``.
        public var invitationBurstPerPeer: Int = 4
        /// Invitations per second one peer id earns back, up to ``invitationBurstPerPeer``.
        public var invitationsPerSecondPerPeer: Double = 1
        /// Invitations one source address may send at once, whatever peer ids they claim (a token
        /// bucket refilled at ``invitationsPerSecondPerAddress``). A global IPv6 address counts as its
        /// network (``ipv6PrefixLength``).
        public var invitationBurstPerAddress: Int = 32
        /// Invitations per second one source address earns back, up to ``invitationBurstPerAddress``.
        public var invitationsPerSecondPerAddress: Double = 8
        /// How many leading bits of a global IPv6 source address the per-address limits count it by: 64
        /// (the default) counts every address of one /64 network as one source, since a host that has one
        /// address of a /64 can usually take any other. IPv4, loopback and link-local addresses always count
        /// each on its own. 128 counts each IPv6 address on its own; values are clamped to 1-128.
        public var ipv6PrefixLength: Int = 64
        /// How the advertiser decides on an inviter's certificate before the invitation is delivered
        /// (after the binding rule): accept every bound certificate (default), pin keys, or ask the app.
        public var certificatePolicy: CertificatePolicy = .acceptBound
        /// Where the advertiser logs refused connections and DNS-SD failures.
        public var logger = Logger(label: "PeerConnectivity.Advertiser")
        /// The event loop group of the advertiser's listener; nil for NIO's shared group. Set through
        /// `eventLoopGroup` of the `PeerConnectivityNIO` module.
        package var ioGroup: (any EventLoopGroup)?
        /// The monotonic time in nanoseconds that the invitation limits and the warning budget read: the event loop's
        /// clock. A test sets a clock of its own, so that what a token bucket earns back is what the test says, not
        /// what a slow machine let pass meanwhile.
        package var uptimeNanoseconds: @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds }

        /// The defaults: all interfaces, an ephemeral port, DNS-SD on, 16 pending invitations.
        public static var `default`: Configuration { Configuration() }

        /// Makes the default configuration; change its properties as needed.
        public init() {}
    }
}
