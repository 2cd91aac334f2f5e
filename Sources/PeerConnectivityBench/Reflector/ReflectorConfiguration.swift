import Foundation
import PeerConnectivity

/// How a reflector presents itself and what it serves.
public struct ReflectorConfiguration: Sendable {
    /// The session listener's port unless told otherwise: fixed, so that a firewall can let it in.
    public static let defaultPort = 7447
    /// The raw echo server's port unless told otherwise.
    public static let defaultRawEchoPort = 7448
    /// The UDP ports of the runners' sessions (unreliable messages), one per runner served at once.
    public static let defaultDatagramPorts = 7449...7480

    /// Its display name, 1-63 bytes of UTF-8.
    public var name: String
    /// The DNS-SD service type ("p2p-bench" for `_p2p-bench._tcp`).
    public var serviceType: String
    /// The address its listeners bind: every interface, IPv6 and IPv4, by default ("::"; the raw-TCP
    /// baseline listens on IPv4 only).
    public var host: String
    /// The session listener's TCP port, 0 for an ephemeral one.
    public var port: Int
    /// The raw echo server's TCP port (0: ephemeral), or nil for none.
    public var rawEchoPort: Int?
    /// Whether to register the DNS-SD service (false: runners connect directly).
    public var publishesService: Bool
    /// Runners served at once; more are declined as busy.
    public var maximumRunners: Int
    /// Runners served at once from one source; more from it are declined as busy. A global IPv6 address
    /// counts as its network of ``ipv6PrefixLength`` bits, as in the advertiser's limits. When every place
    /// is held, a runner from a source that holds none takes the place of the longest-held runner of the
    /// source that holds the most (at least two), which is told it was evicted for a newcomer.
    /// The default lets one responsiveness run from a source (16 load flows at most, and its probes) be
    /// served whole.
    public var maximumRunnersPerAddress = TestPlan.maximumLoadFlows + 1
    /// How many leading bits of a global IPv6 address name its source for the per-address limits (runner
    /// places, invitation rate, pending handshakes): 64, one network, by default; 128 counts each address on
    /// its own. IPv4, loopback and link-local addresses always count each on its own.
    public var ipv6PrefixLength = Advertiser.Configuration.default.ipv6PrefixLength
    /// Invitations taken per second from one source address, after a burst of four times as many; more
    /// are declined as rate-limited (the advertiser's default is 8 a second).
    public var invitationsPerSecondPerAddress: Double = Advertiser.Configuration.default.invitationsPerSecondPerAddress
    /// How long a runner may send nothing but keepalives before it is dropped (its place freed for
    /// others); nil never drops one.
    public var idleTimeout: Duration? = .seconds(60)
    /// How long a runner's connection may go without a byte from the runner, keepalives included, before it is
    /// dropped as gone (`DisconnectReason.livenessTimeout`): the session's default, 5 s. A runner whose host
    /// stalls for seconds (a loaded machine, a link that pauses) needs a longer one.
    public var livenessTimeout: Duration = Session.Configuration.default.livenessTimeout
    /// The clock the idle check reads and sweeps by: the continuous clock unless a test gives one of its own.
    package var idleClock: any IdleClock = ContinuousIdleClock()
    /// How long a runner's connection has from its accept to its invitation: the advertiser's default, or longer in a
    /// test on a loaded machine, where a TLS handshake took more than that.
    package var handshakeTimeout: Duration = Advertiser.Configuration.default.handshakeTimeout
    /// Where received resources land before they are confirmed and deleted; nil for a new folder in the
    /// temporary directory, removed when the reflector stops.
    public var resourceDirectory: URL?
    /// The UDP ports the runners' sessions take for unreliable messages, the first free one each; nil for
    /// ephemeral ones.
    public var datagramPorts: ClosedRange<Int>? = ReflectorConfiguration.defaultDatagramPorts
    /// The largest resource taken from a runner, in bytes; nil for no maximum but the free space.
    public var maximumResourceSize: UInt64?
    /// The memory, in bytes, that the large messages (over 1 MiB) of all runners together may hold while they
    /// are received: the ``Session/Configuration/processLargeMessageBudget`` of each runner's session (the
    /// library's default, 256 MiB). A message that would go over it is refused as busy.
    public var largeMessageBudget = Session.Configuration.default.processLargeMessageBudget
    /// The flow-control window of the streams it reads from each runner, in bytes; nil for
    /// ``aloneStreamWindow`` for a runner served alone and ``sharedStreamWindow`` for each runner that
    /// comes while others are served, so that one runner alone is not held back by its window (a bulk
    /// test on loopback moves about a quarter less through 512 KiB) and many at full speed hold little memory.
    public var streamWindow: Int?
    /// The stream window of a runner served alone, unless ``streamWindow`` is set: 4 MiB, as the
    /// runner's own (``RunnerConfiguration/defaultStreamWindow``); the library's default is 512 KiB.
    public static let aloneStreamWindow = RunnerConfiguration.defaultStreamWindow
    /// The stream window of a runner that comes while others are served, unless ``streamWindow`` is set.
    public static let sharedStreamWindow = 512 << 10
    /// The stream windows the tools take (`-w`, both ends): from the window every channel starts with
    /// to 64 MiB.
    public static let streamWindowRange = (256 << 10)...(64 << 20)
    /// The encryption preference of its advertiser and of the session it makes for each runner.
    public var encryption: EncryptionPreference = .default
    /// Reconnection of the session it makes for a runner that asks for it in its invitation
    /// (``RunnerInvitation``: test-runner `--interrupt-at`); nil, the default, for none. Other runners'
    /// sessions have none.
    public var reconnection: Session.Reconnection?
    /// The `reflector` tool's reconnection unless `--no-reconnection`: the library's defaults, a 30 s
    /// window.
    public static var defaultReconnection: Session.Reconnection {
        var reconnection = Session.Reconnection.default
        reconnection.window = .seconds(30)
        return reconnection
    }

    /// Makes a configuration.
    ///
    /// - Parameters:
    ///   - name: the display name, "reflector-<host name>" by default.
    ///   - serviceType: the DNS-SD service type.
    ///   - host: the address to bind ("::": every interface, IPv6 and IPv4).
    ///   - port: the session port.
    ///   - rawEchoPort: the raw echo port, nil for none.
    ///   - publishesService: whether to register with DNS-SD.
    ///   - maximumRunners: runners served at once.
    ///   - resourceDirectory: where received resources land, nil for a temporary folder.
    public init(
        name: String = String("reflector-\(ProcessInfo.processInfo.hostName)".utf8.prefix(63)) ?? "reflector",
        serviceType: String = "p2p-bench",
        host: String = "::",
        port: Int = 0,
        rawEchoPort: Int? = nil,
        publishesService: Bool = true,
        maximumRunners: Int = 32,
        resourceDirectory: URL? = nil
    ) {
        self.name = name
        self.serviceType = serviceType
        self.host = host
        self.port = port
        self.rawEchoPort = rawEchoPort
        self.publishesService = publishesService
        self.maximumRunners = maximumRunners
        self.resourceDirectory = resourceDirectory
    }
}
