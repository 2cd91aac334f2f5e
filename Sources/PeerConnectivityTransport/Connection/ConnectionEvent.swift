import NIOCore
import PeerConnectivityCore

/// Something that happened on a ``Connection``, in the order it happened.
///
/// Delivered synchronously on the connection's event loop to its ``ConnectionDelegate``: the
/// handler's answer to ``message(_:from:)`` pauses reading (receive backpressure), and a session counts a
/// peer in before ACCEPT leaves because ``established(_:)`` is handled before the handler writes it.
package enum ConnectionEvent: Sendable {
    /// The inviter learned who answered (its HELLO arrived and matched the expected peer, if any).
    case identified(PeerID)

    /// An invitation arrived on an invitee connection; answer with ``Connection/accept(delegate:keepaliveInterval:livenessTimeout:maximumMessageLength:)``
    /// or ``Connection/decline(_:)`` before `timeout`.
    case invitation(from: PeerID, context: ByteBuffer, timeout: TimeAmount)

    /// The handshake completed: both sides may now send data.
    case established(PeerID)

    /// A data message arrived. The handler's ``ConnectionReadDemand`` says whether to keep reading.
    ///
    /// A message up to ``PeerConnectivityCore/ReceiveBuffer/copiedMessageLimit`` may be a slice of the
    /// socket's read buffer, whose storage can be much larger than the message: copy it to keep it
    /// past the handling (as the session does, into `Data`).
    case message(ByteBuffer, from: PeerID)

    /// The peer said where it receives unreliable messages: UDP `port` on its address, each datagram
    /// starting with `token`.
    case datagramEndpoint(port: UInt16, token: UInt64, from: PeerID)

    /// On an encrypted connection, the peer sent the key to seal datagrams to it with (before its
    /// DATAGRAM-ENDPOINT).
    case datagramKey([UInt8], from: PeerID)

    /// The peer told this side about its session (mesh): its listener (SESSION-LISTENER) or other
    /// members (MEMBERS).
    case membership(Frame, from: PeerID)

    /// Something happened on a channel the peer opened (a stream or a resource).
    case channel(IncomingChannelEvent, from: PeerID)

    /// A resumer asks to re-establish a link that dropped (RESUME, on an invitee connection); answer with
    /// ``Connection/acceptResume(delegate:nextExpected:keepaliveInterval:livenessTimeout:maximumMessageLength:)``
    /// or ``Connection/decline(_:)``.
    case resumeRequested(from: PeerID, secret: [UInt8], peerExpects: UInt64)

    /// A link was re-established on this connection (either side of RESUME): the peer has received
    /// `peerExpects` of this side's reliable messages on the link.
    case resumed(PeerID, peerExpects: UInt64)

    /// The peer's secret for resuming this link (RESUME-SECRET).
    case resumeSecret([UInt8], from: PeerID)

    /// The peer acknowledged `count` reliable messages on the link (ACK).
    case acknowledged(UInt64, from: PeerID)

    /// The connection closed; always the last event, exactly once.
    case closed(peer: PeerID?, reason: DisconnectReason)
}
