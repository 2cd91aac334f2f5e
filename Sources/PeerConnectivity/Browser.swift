import Foundation

/// Finds peers advertising a service and invites them, as MPC's `MCNearbyServiceBrowser`.
///
/// ```swift
/// let browser = try Browser(peer: me, serviceType: "chat")
/// try browser.start()
/// for try await event in browser.events {
///     if case .found(let peer, _) = event {
///         try await browser.invitePeer(peer, to: session, withContext: nil, timeout: .seconds(10))
///     }
/// }
/// ```
///
/// It never reports its own peer. Stopping it (or releasing it) ends ``events``.
public final class Browser: Sendable {
    /// This side's identity (never reported as found).
    public let peer: PeerID
    /// The service type browsed: "chat" for `_chat._tcp`.
    public let serviceType: String
    /// Found and lost peers, in order, for any number of iterators; each starts with the peers found
    /// at that moment. Ends when the browser stops; throws ``DiscoveryError`` if avahi-daemon goes away.
    public let events: Events

    let runtime: BrowserRuntime
    let delegateAdapter = BrowserDelegateAdapter()

    /// Makes a browser; nothing happens on the network until ``start()``.
    ///
    /// - Parameters:
    ///   - peer: this side's identity.
    ///   - serviceType: as for
    ///     ``Advertiser/init(peer:discoveryInfo:serviceType:securityIdentity:encryptionPreference:configuration:)``.
    ///   - configuration: timers.
    /// - Throws: ``DiscoveryError/invalidServiceType(_:)``.
    public convenience init(
        peer: PeerID,
        serviceType: String,
        configuration: Configuration = .default
    ) throws(DiscoveryError) {
        try self.init(peer: peer, serviceType: serviceType, configuration: configuration, resolver: nil)
    }

    /// Makes a browser whose resolves go through `resolver` (a test's stand-in), or DNS-SD when nil.
    init(
        peer: PeerID,
        serviceType: String,
        configuration: Configuration,
        resolver: BrowserRuntime.Resolver?
    ) throws(DiscoveryError) {
        try DiscoveryRecord.validate(serviceType: serviceType)
        self.peer = peer
        self.serviceType = serviceType
        self.runtime =
            if let resolver {
                BrowserRuntime(peer: peer, serviceType: serviceType, configuration: configuration, resolver: resolver)
            } else {
                BrowserRuntime(peer: peer, serviceType: serviceType, configuration: configuration)
            }
        self.events = Events(runtime: runtime)
    }

    deinit {
        runtime.stop()
    }

    /// Starts browsing.
    ///
    /// - Throws: ``DiscoveryError/daemonNotRunning`` at once when avahi-daemon is not running,
    ///   ``DiscoveryError/notRestartable`` after ``stop()``.
    public func start() throws(DiscoveryError) {
        try runtime.start()
    }

    /// Stops browsing and ends ``events``.
    public func stop() {
        runtime.stop()
    }

    /// The peers found and not lost, with their discoveryInfo.
    public var foundPeers: [PeerID: [String: String]] {
        runtime.foundPeers
    }

    /// Invites a found peer into `session`. The peer shows there as `connecting`, then `connected`
    /// when it accepts, or `notConnected` with the reason when it declines or the timeout passes.
    ///
    /// - Parameters:
    ///   - peer: a peer this browser has found.
    ///   - session: the session it joins.
    ///   - context: data the peer sees with the invitation, at most 64 KiB.
    ///   - timeout: how long to wait for the answer (default 30 s).
    /// The peer's addresses come from DNS-SD (its host's A and AAAA records; the system resolver when
    /// those give none), and every one is tried, IPv6 first, 250 ms apart, until one connects.
    /// When the peer cannot be reached at the address the browser found (`.connectionFailed`: refused or
    /// timed out, as after the peer restarted on another port), or another peer answers there
    /// (`.unexpectedPeer`: the port was taken since, even by this process), the browser resolves its service
    /// again, so that a later invitation goes to the new address.
    ///
    /// - Throws: ``InvitationError`` when the peer is not found, declines, does not answer in time or
    ///   cannot be reached; ``SessionError`` when the session is full or already holds the peer.
    public func invitePeer(
        _ peer: PeerID,
        to session: Session,
        withContext context: Data? = nil,
        timeout: Duration = .seconds(30)
    ) async throws {
        guard let target = await runtime.dialTarget(of: peer) else { throw InvitationError.peerNotFound(peer) }
        do {
            _ = try await session.runtime.invite(
                expectedPeer: peer,
                to: target,
                context: context,
                timeout: timeout
            )
        } catch let error as InvitationError where [.connectionFailed, .unexpectedPeer].contains(error.reason) {
            runtime.endpointStale(peer)
            throw error
        }
    }
}
