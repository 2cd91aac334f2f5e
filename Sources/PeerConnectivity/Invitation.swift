import Foundation
import PeerConnectivityTransport

/// An invitation from a peer to join a session, from ``Advertiser/invitations``.
///
/// Answer it with ``accept(into:)`` or ``decline()`` before ``timeout``; one left unanswered is
/// declined as timed out when the inviter's timeout passes.
public struct Invitation: Sendable {
    /// The peer that invites.
    public let peer: PeerID
    /// The data the inviter sent with the invitation (empty when it sent none).
    public let context: Data
    /// How long the inviter waits for the answer.
    public let timeout: Duration
    /// How the connection is secured: whether it is encrypted, the inviter's certificate, and the
    /// pairing code to compare with the inviter's before accepting.
    public let security: PeerSecurityInfo

    /// The inviter's IP address as this side sees it ("192.0.2.7", "fe80::1%eth0"), for logs and for
    /// limits per source; `nil` when the socket no longer says.
    public var address: String? {
        connection.remoteIPAddress
    }

    let connection: Connection
    let advertiser: AdvertiserRuntime

    /// Accepts: the peer joins `session` and shows there as `connecting`, then `connected`.
    ///
    /// - Parameter session: the session the peer joins.
    /// - Throws: ``SessionError`` when the session is full or already holds the peer (the inviter
    ///   is then told so); ``InvitationError/notPending(peer:reason:)`` when the invitation has been
    ///   answered, withdrawn or has expired; ``InvitationError/failed(peer:reason:)`` with
    ///   `DisconnectReason.encryptionRequired` when the session requires encryption and this
    ///   connection is plain (the inviter is told so too).
    public func accept(into session: Session) async throws {
        advertiser.answered(connection)
        try await session.runtime.acceptInvitation(on: connection, from: peer)
    }

    /// Declines: the inviter sees `DisconnectReason.declined`.
    public func decline() {
        advertiser.answered(connection)
        connection.decline(.declined)
    }

    /// Declines because this side cannot take the peer now (it serves as many as it can): the inviter
    /// sees `DisconnectReason.busy`, which says to try again later, not a refusal.
    ///
    /// - Parameter detail: why, for the inviter's error and logs ("32 runners served already").
    public func declineAsBusy(detail: String) {
        advertiser.answered(connection)
        connection.decline(.busy.with(detail: detail))
    }
}
