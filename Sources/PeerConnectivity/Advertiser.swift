import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// Makes this peer discoverable and receives invitations, as MPC's `MCNearbyServiceAdvertiser`.
///
/// It listens on a TCP port and registers the DNS-SD service `_<serviceType>._tcp` through
/// avahi-daemon, with a TXT record carrying the peer's id, display name, protocol version and
/// `discoveryInfo`. Invitations arrive on ``invitations``:
///
/// ```swift
/// let advertiser = try Advertiser(peer: me, discoveryInfo: ["room": "blue"], serviceType: "chat")
/// try await advertiser.start()
/// for await invitation in advertiser.invitations {
///     try await invitation.accept(into: session)
/// }
/// ```
///
/// Stopping it (or releasing it) unregisters the service, closes the port, declines invitations not
/// yet answered and ends ``invitations``; sessions already joined are not affected.
public final class Advertiser: Sendable {
    /// This side's identity.
    public let peer: PeerID
    /// The application's discovery data, published in the TXT record.
    public let discoveryInfo: [String: String]?
    /// The service type, without the leading underscore and protocol: "chat" for `_chat._tcp`.
    public let serviceType: String
    /// Where it listens, and its limits.
    public let configuration: Configuration
    /// Invitations from peers, in order of arrival. Ends when the advertiser stops.
    public let invitations: AsyncStream<Invitation>
    /// Inviters' certificates waiting for a decision before their invitations are delivered, with
    /// ``CertificatePolicy/ask(timeout:)`` in the configuration (one consumer).
    public let certificateRequests: AsyncStream<CertificateRequest>
    /// Whether incoming connections are encrypted (see ``EncryptionPreference``).
    public let encryptionPreference: EncryptionPreference

    let runtime: AdvertiserRuntime
    let delegateAdapter = AdvertiserDelegateAdapter()

    /// Makes an advertiser; nothing happens on the network until ``start()``.
    ///
    /// - Parameters:
    ///   - peer: this side's identity.
    ///   - discoveryInfo: key/value pairs for browsers to see; keys without '=' or the reserved
    ///     prefix "pc.", each key=value at most 255 bytes.
    ///   - serviceType: 1-15 characters of a-z, 0-9 and '-', at least one letter, no leading,
    ///     trailing or double hyphen (as MPC's).
    ///   - securityIdentity: the identity proved to inviters on encrypted connections: pass the same
    ///     one as the session's. **Precondition:** its peer is `peer`. Without one an ephemeral identity
    ///     is made (a key-derived `peer` needs its identity unless encryption is `.none`).
    ///   - encryptionPreference: `.required` by default, as MPC's (plain only when asked for by name:
    ///     `.none`, or `.optional` against a peer that says none). The TLS handshake, the pairing code and the
    ///     certificate decision happen before the invitation is delivered.
    ///   - configuration: where to listen, limits, and the certificate policy.
    /// - Throws: ``DiscoveryError`` when the service type or discoveryInfo breaks those rules.
    public init(
        peer: PeerID,
        discoveryInfo: [String: String]? = nil,
        serviceType: String,
        securityIdentity: SecurityIdentity? = nil,
        encryptionPreference: EncryptionPreference = .default,
        configuration: Configuration = .default
    ) throws(DiscoveryError) {
        try DiscoveryRecord.validate(serviceType: serviceType)
        try DiscoveryRecord.validate(discoveryInfo: discoveryInfo ?? [:])
        self.peer = peer
        self.discoveryInfo = discoveryInfo
        self.serviceType = serviceType
        self.configuration = configuration
        let (stream, continuation) = AsyncStream.makeStream(of: Invitation.self)
        self.invitations = stream
        let (requests, requestContinuation) = AsyncStream.makeStream(of: CertificateRequest.self)
        self.certificateRequests = requests
        self.encryptionPreference = encryptionPreference
        let identity = Session.identity(for: peer, given: securityIdentity, preference: encryptionPreference)
        let security = SecuritySetup.make(
            identity: identity,
            preference: encryptionPreference,
            policy: configuration.certificatePolicy,
            requests: requestContinuation,
            eventLoop: PeerEventLoop.loop(for: peer, in: configuration.ioGroup)
        )
        self.runtime = AdvertiserRuntime(
            record: DiscoveryRecord(peer: peer, discoveryInfo: discoveryInfo ?? [:]),
            serviceType: serviceType,
            configuration: configuration,
            security: security,
            continuation: continuation
        )
    }

    deinit {
        let runtime = self.runtime
        Task { await runtime.stop() }
    }

    /// Starts listening and advertising. Returns once the DNS-SD service is registered.
    ///
    /// - Throws: ``DiscoveryError/daemonNotRunning`` (within a second, saying how to start it),
    ///   ``DiscoveryError/listenFailed(_:)``, ``DiscoveryError/dnsServiceFailed(_:)``, or
    ///   ``DiscoveryError/notRestartable`` after ``stop()``.
    public func start() async throws(DiscoveryError) {
        try await runtime.start()
    }

    /// Stops advertising and listening; declines invitations not yet answered; ends ``invitations``.
    public func stop() async {
        await runtime.stop()
    }

    /// The TCP port it listens on, once started: give it to peers that connect directly.
    public var port: Int? {
        runtime.port
    }

    /// The DNS-SD instance name registered, once started (the peer's id, lowercase).
    public var serviceName: String? {
        runtime.serviceName
    }
}
