import Foundation

/// What a ``Session`` reports, as MPC's `MCSessionDelegate`, for code ported from MultipeerConnectivity:
/// set ``Session/delegate``.
///
/// The methods are called on the main actor (MPC calls them on a private queue, and most apps hop to
/// the main queue first: here that hop is done for you), one at a time, in the order of
/// ``Session/events``, of which the delegate is one more subscriber. New code can iterate
/// ``Session/events`` instead, or bind a ``SessionModel``.
///
/// While the main actor is busy, messages wait for the delegate; once more than
/// ``Session/Configuration/receiveBufferLimit`` bytes wait, the session stops reading from the network
/// until the delegate has caught up. Nothing is dropped.
@MainActor
public protocol SessionDelegate: AnyObject, Sendable {
    /// A peer's state changed (`MCSessionDelegate.session(_:peer:didChange:)`).
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - peerID: the peer.
    ///   - state: its new state.
    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState)

    /// A peer's state changed, and why when it is `notConnected`. Its default implementation calls
    /// ``session(_:peer:didChange:)``; implement it instead to learn the reason.
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - peerID: the peer.
    ///   - state: its new state.
    ///   - reason: why it is `notConnected` (declined, timed out, lost, ...), else `nil`.
    func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState, reason: DisconnectReason?)

    /// A message arrived (`MCSessionDelegate.session(_:didReceive:fromPeer:)`).
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - data: the message.
    ///   - peerID: the peer that sent it.
    func session(_ session: Session, didReceive data: Data, fromPeer peerID: PeerID)

    /// A peer opened a stream (`MCSessionDelegate.session(_:didReceive:withName:fromPeer:)`, with an
    /// ``IncomingStream``, an `AsyncSequence` of chunks, for MPC's `InputStream`).
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - stream: the stream: read it from a task (releasing it unread cancels it).
    ///   - streamName: the name the peer gave it.
    ///   - peerID: the peer.
    func session(
        _ session: Session,
        didReceive stream: IncomingStream,
        withName streamName: String,
        fromPeer peerID: PeerID
    )

    /// A peer started sending a resource
    /// (`MCSessionDelegate.session(_:didStartReceivingResourceWithName:fromPeer:with:)`).
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - resourceName: the name the peer sent (untrusted).
    ///   - peerID: the peer.
    ///   - progress: bytes written so far; cancelling it cancels the transfer.
    func session(
        _ session: Session,
        didStartReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        with progress: Progress
    )

    /// A resource finished arriving, or failed
    /// (`MCSessionDelegate.session(_:didFinishReceivingResourceWithName:fromPeer:at:withError:)`).
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - resourceName: the name the peer sent.
    ///   - peerID: the peer.
    ///   - localURL: the file, checked with SHA-256, in ``Session/Configuration/resourceDirectory``;
    ///     `nil` on failure.
    ///   - error: why it failed, else `nil`.
    func session(
        _ session: Session,
        didFinishReceivingResourceWithName resourceName: String,
        fromPeer peerID: PeerID,
        at localURL: URL?,
        withError error: TransferError?
    )
}

extension SessionDelegate {
    /// Calls ``session(_:peer:didChange:)``, without the reason.
    ///
    /// - Parameters:
    ///   - session: the session.
    ///   - peerID: the peer.
    ///   - state: its new state.
    ///   - reason: why it is `notConnected`; not passed on.
    public func session(_ session: Session, peer peerID: PeerID, didChange state: PeerState, reason: DisconnectReason?)
    {
        self.session(session, peer: peerID, didChange: state)
    }
}
