import Foundation

/// Something that happened in a ``Session``, delivered in order through ``Session/events``.
public enum SessionEvent: Sendable {
    /// A peer's state changed. `reason` says why when the new state is `notConnected`.
    case peerStateChanged(PeerID, PeerState, reason: DisconnectReason?)
    /// A message arrived from a connected peer, and how it travelled: ``SendMode/unreliable`` for a
    /// UDP datagram. (An unreliable message sent before the peer knew this side's UDP endpoint came on
    /// the connection, and arrives as ``SendMode/reliable``.)
    case dataReceived(Data, from: PeerID, mode: SendMode)
    /// A peer opened a stream to this side (``Session/startStream(withName:toPeer:)`` there): read
    /// its chunks from the ``IncomingStream``, which carries its name and peer.
    case streamReceived(IncomingStream)
    /// A peer started sending a resource (``Session/sendResource(at:withName:toPeer:)`` there).
    /// `progress` counts the bytes written to disk; cancelling it cancels the transfer for both sides.
    /// `name` is the sender's, as sent: untrusted, and not the local file's name.
    case startedReceivingResource(name: String, from: PeerID, progress: Progress)
    /// A resource finished arriving: its local file (in ``Session/Configuration/resourceDirectory``,
    /// each block checked with its digest (XXH64 or XXH3-64), and the SHA-256 root over them), or why it
    /// failed. A failed resource leaves no file under its name; when its link dropped, the blocks already checked stay in a
    /// hidden partial file for the sender to resume (``Session/Configuration/partialResourceLifetime``).
    /// A folder received whole is there, whole, when this arrives, and a failed one is not: its files
    /// stay only hidden, in a staging directory kept for the sender to resume, or not at all.
    /// A resource the sender resumes, or opens again after a damaged block, arrives as a new
    /// ``startedReceivingResource(name:from:progress:)``.
    case finishedReceivingResource(name: String, from: PeerID, result: Result<URL, TransferError>)
}
