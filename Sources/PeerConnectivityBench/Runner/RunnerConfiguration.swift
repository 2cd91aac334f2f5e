import Foundation
import PeerConnectivity

/// Everything a run needs besides the plan's numbers: where the reflector is and what to call the run.
public struct RunnerConfiguration: Sendable {
    /// The plan.
    public var plan: TestPlan
    /// The reflector to measure against.
    public var target: ReflectorTarget
    /// The DNS-SD service type reflectors advertise ("p2p-bench" for `_p2p-bench._tcp`).
    public var serviceType: String
    /// The raw echo port for the raw-tcp test; nil to take the one the reflector announces.
    public var rawPort: Int?
    /// The run's name, in the document and its file name.
    public var runName: String
    /// How long finding, inviting and hearing the reflector's hello may take, each.
    public var connectTimeout: Duration
    /// The encryption preference of the runner's session.
    public var encryption: EncryptionPreference = .default
    /// The flow-control window of the streams the runner reads, in bytes.
    public var streamWindow = RunnerConfiguration.defaultStreamWindow
    /// The responsiveness test: the `TCP_NOTSENT_LOWAT` of the loaded session's connection, in bytes (nil:
    /// the kernel's default); see ``PeerConnectivity/Session/Configuration/notSentLowWatermark``.
    public var notSentLowWatermark: Int? = RunnerConfiguration.defaultNotSentLowWatermark
    /// Whether this session's streams, and the reflector's to it, also wait while the kernel holds
    /// ``notSentLowWatermark`` unsent: the responsiveness test's flow of self probes does, its other load
    /// flows do not, so that they load the link as other bulk traffic does.
    package var gatesUnsentBytes = true
    /// The IP family the runner dials the reflector over (`-4`, `-6`): every connection of the run, the raw
    /// baseline's included.
    public var dialFamily: AddressFamily = .any
    /// The local address the runner's connections and UDP socket are bound to (`-B`); nil: the system's choice.
    public var localAddress: String?
    /// The TCP congestion control of the run's sessions' connections (`-C`), asked of the reflector too; nil
    /// keeps each system's. See ``PeerConnectivity/Session/Configuration/congestionControl``.
    public var congestionControl: String?
    /// The loaded connections' `TCP_NOTSENT_LOWAT` unless told otherwise: 16 KiB, as the responsiveness draft
    /// advises a low one, so that the test's own send buffers do not stand between a self probe and the link.
    /// On a 20 Mbit/s link shared by 8 flows, each flow's 16 KiB is about 50 ms; 128 KiB there doubled the self
    /// probes' round trips.
    public static let defaultNotSentLowWatermark = 16 << 10
    /// The runner's stream window unless told otherwise: 4 MiB, so that a `--reverse` bulk test is not
    /// held back by its window (the library's default, 512 KiB, bounds what a peer's unread streams hold).
    public static let defaultStreamWindow = 4 << 20

    /// Makes a configuration.
    ///
    /// - Parameters:
    ///   - plan: the plan.
    ///   - target: the reflector.
    ///   - serviceType: the DNS-SD service type.
    ///   - rawPort: the raw echo port, nil to ask the reflector.
    ///   - runName: the run's name, the host name by default.
    ///   - connectTimeout: the time each connection step may take.
    public init(
        plan: TestPlan,
        target: ReflectorTarget = .discover(name: nil),
        serviceType: String = "p2p-bench",
        rawPort: Int? = nil,
        runName: String = ProcessInfo.processInfo.hostName,
        connectTimeout: Duration = .seconds(10)
    ) {
        self.plan = plan
        self.target = target
        self.serviceType = serviceType
        self.rawPort = rawPort
        self.runName = runName
        self.connectTimeout = connectTimeout
    }
}
