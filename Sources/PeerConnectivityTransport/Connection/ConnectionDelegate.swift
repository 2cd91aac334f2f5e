import NIOCore
import PeerConnectivityCore

/// Receives what happens on a ``Connection``. Every method is called on the connection's event loop,
/// in the order things happened; implementations must not block.
package protocol ConnectionDelegate: AnyObject, Sendable {
    /// The inviter learned who answered (its HELLO arrived and matched the expected peer, if any).
    func connection(_ connection: Connection, identified peer: PeerID)

    /// An invitation arrived on an invitee connection; answer with ``Connection/accept(delegate:keepaliveInterval:livenessTimeout:maximumMessageLength:)``
    /// or ``Connection/decline(_:)`` before `timeout`.
    func connection(
        _ connection: Connection,
        receivedInvitationFrom peer: PeerID,
        context: ByteBuffer,
        timeout: TimeAmount
    )

    /// The handshake completed: both sides may now send data.
    func connection(_ connection: Connection, establishedWith peer: PeerID)

    /// A data message arrived.
    ///
    /// - Returns: `false` to pause reading from the socket until ``Connection/resumeReading()``.
    func connection(_ connection: Connection, received message: ByteBuffer, from peer: PeerID) -> Bool

    /// The peer said where it receives unreliable messages: UDP `port` on its address, each datagram
    /// starting with `token`.
    func connection(_ connection: Connection, datagramEndpoint port: UInt16, token: UInt64, from peer: PeerID)

    /// On an encrypted connection, the peer sent the key to seal datagrams to it with (before its
    /// DATAGRAM-ENDPOINT).
    func connection(_ connection: Connection, datagramKey key: [UInt8], from peer: PeerID)

    /// The peer told this side about its session (mesh): its listener (SESSION-LISTENER) or other
    /// members (MEMBERS).
    func connection(_ connection: Connection, membership frame: Frame, from peer: PeerID)

    /// Something happened on a channel the peer opened (a stream or a resource).
    func connection(_ connection: Connection, channelEvent event: InboundChannelEvent, from peer: PeerID)

    /// The connection closed; called exactly once, last.
    func connection(_ connection: Connection, closedWith peer: PeerID?, reason: DisconnectReason)

    /// A resumer asks to re-establish a link that dropped (RESUME, on an invitee connection); answer with
    /// ``Connection/acceptResume(delegate:nextExpected:keepaliveInterval:livenessTimeout:maximumMessageLength:)``
    /// or ``Connection/decline(_:)``.
    func connection(_ connection: Connection, receivedResumeFrom peer: PeerID, secret: [UInt8], peerExpects: UInt64)

    /// A link was re-established on this connection (either side of RESUME): the peer has received
    /// `peerExpects` of this side's reliable messages on the link.
    func connection(_ connection: Connection, resumedWith peer: PeerID, peerExpects: UInt64)

    /// The peer's secret for resuming this link (RESUME-SECRET).
    func connection(_ connection: Connection, resumeSecret secret: [UInt8], from peer: PeerID)

    /// The peer acknowledged `count` reliable messages on the link (ACK).
    func connection(_ connection: Connection, acknowledged count: UInt64, from peer: PeerID)
}

extension ConnectionDelegate {
    /// Refuses: only a session with reconnection resumes links.
    package func connection(
        _ connection: Connection,
        receivedResumeFrom peer: PeerID,
        secret: [UInt8],
        peerExpects: UInt64
    ) {
        connection.decline(.resumeRefused.with(detail: "this side does not resume links"))
    }

    /// Closes: only a session resumes links, and it never hands such a connection elsewhere.
    package func connection(_ connection: Connection, resumedWith peer: PeerID, peerExpects: UInt64) {
        connection.close(.resumeRefused)
    }

    /// Ignored: only a session with reconnection uses it.
    package func connection(_ connection: Connection, resumeSecret secret: [UInt8], from peer: PeerID) {}

    /// Ignored: only a session with reconnection uses it.
    package func connection(_ connection: Connection, acknowledged count: UInt64, from peer: PeerID) {}
}

extension ConnectionDelegate {
    /// Ignores the key: only a session sends datagrams.
    package func connection(_ connection: Connection, datagramKey key: [UInt8], from peer: PeerID) {}
}
