import Foundation

/// What an ``Advertiser`` reports, as MPC's `MCNearbyServiceAdvertiserDelegate`, for code ported
/// from MultipeerConnectivity: set ``Advertiser/delegate`` and call ``Advertiser/startAdvertisingPeer()``.
///
/// The methods are called on the main actor, one at a time (MPC calls them on a private queue).
/// New code can iterate ``Advertiser/invitations`` instead.
@MainActor
public protocol AdvertiserDelegate: AnyObject, Sendable {
    /// A peer invites this side into a session
    /// (`MCNearbyServiceAdvertiserDelegate.advertiser(_:didReceiveInvitationFromPeer:withContext:invitationHandler:)`).
    ///
    /// Call `invitationHandler` once, from any thread, now or later: `(true, session)` accepts into
    /// `session`, `(false, nil)` declines. An invitation not answered before the inviter's timeout is
    /// declined as timed out; calls after the first are ignored.
    ///
    /// - Parameters:
    ///   - advertiser: the advertiser.
    ///   - peerID: the inviting peer.
    ///   - context: the data the inviter sent with the invitation; `nil` when it sent none.
    ///   - invitationHandler: the answer.
    func advertiser(
        _ advertiser: Advertiser,
        didReceiveInvitationFromPeer peerID: PeerID,
        withContext context: Data?,
        invitationHandler: @escaping @Sendable (Bool, Session?) -> Void
    )

    /// Advertising could not start (`MCNearbyServiceAdvertiserDelegate.advertiser(_:didNotStartAdvertisingPeer:)`):
    /// after ``Advertiser/startAdvertisingPeer()``.
    ///
    /// - Parameters:
    ///   - advertiser: the advertiser.
    ///   - error: why: a ``DiscoveryError`` (avahi-daemon not running, the port taken, ...).
    func advertiser(_ advertiser: Advertiser, didNotStartAdvertisingPeer error: any Error)

    /// Accepting an invitation through the handler failed (the session is full or holds the peer
    /// already, or the invitation expired). MPC has no such method; the default implementation logs
    /// the error to ``Advertiser/Configuration/logger``.
    ///
    /// - Parameters:
    ///   - advertiser: the advertiser.
    ///   - peerID: the inviting peer (told that its invitation was declined).
    ///   - error: a ``SessionError`` or ``InvitationError``.
    func advertiser(_ advertiser: Advertiser, didNotAcceptInvitationFromPeer peerID: PeerID, error: any Error)
}

extension AdvertiserDelegate {
    /// Logs the error to ``Advertiser/Configuration/logger``.
    ///
    /// - Parameters:
    ///   - advertiser: the advertiser.
    ///   - peerID: the inviting peer.
    ///   - error: why accepting failed.
    public func advertiser(_ advertiser: Advertiser, didNotAcceptInvitationFromPeer peerID: PeerID, error: any Error) {
        advertiser.configuration.logger.warning("accepting the invitation of \(peerID) failed: \(error)")
    }
}
