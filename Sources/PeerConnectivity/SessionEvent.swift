import Foundation

/// Something that happened in a ``Session``, delivered in order through ``Session/events``.
public enum SessionEvent: Sendable {
    /// A peer's state changed. `reason` says why when the new state is `notConnected`.
    case peerStateChanged(PeerID, PeerState, reason: DisconnectReason?)
    /// A message arrived from a connected peer.
    case dataReceived(Data, from: PeerID)
    /// A peer opened a stream to this side (``Session/startStream(withName:toPeer:)`` there): read
    /// its chunks from the ``IncomingStream``, which carries its name and peer.
    case streamReceived(IncomingStream)
}
