/// What a ``Browser`` reports, as MPC's `MCNearbyServiceBrowserDelegate`, for code ported from
/// MultipeerConnectivity: set ``Browser/delegate`` and call ``Browser/startBrowsingForPeers()``.
///
/// The methods are called on the main actor, one at a time, in the order of ``Browser/events``, of
/// which the delegate is one more subscriber (MPC calls them on a private queue).
@MainActor
public protocol BrowserDelegate: AnyObject, Sendable {
    /// A peer was found (`MCNearbyServiceBrowserDelegate.browser(_:foundPeer:withDiscoveryInfo:)`).
    /// A delegate set while peers are found hears of each of them at once.
    ///
    /// - Parameters:
    ///   - browser: the browser.
    ///   - peerID: the peer: pass it to ``Browser/invitePeer(_:to:withContext:timeout:)``.
    ///   - info: its discoveryInfo; `nil` when it has none.
    func browser(_ browser: Browser, foundPeer peerID: PeerID, withDiscoveryInfo info: [String: String]?)

    /// A found peer is no longer advertised (`MCNearbyServiceBrowserDelegate.browser(_:lostPeer:)`).
    ///
    /// - Parameters:
    ///   - browser: the browser.
    ///   - peerID: the peer.
    func browser(_ browser: Browser, lostPeer peerID: PeerID)

    /// Browsing could not start, or failed later (avahi-daemon went away)
    /// (`MCNearbyServiceBrowserDelegate.browser(_:didNotStartBrowsingForPeers:)`).
    ///
    /// - Parameters:
    ///   - browser: the browser.
    ///   - error: a ``DiscoveryError``.
    func browser(_ browser: Browser, didNotStartBrowsingForPeers error: any Error)
}
