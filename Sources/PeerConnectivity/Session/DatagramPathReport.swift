import PeerConnectivityCore

/// Where a session's UDP path to a peer stands: how its unreliable messages to that peer travel
/// (``Session/datagramPath(to:)``).
package enum DatagramPathReport: Sendable, Hashable {
    /// Not known yet: the peer's datagram endpoint, or this side's socket, is not there yet; unreliable
    /// messages go on the connection meanwhile.
    case pending
    /// The session could not bind a UDP socket: unreliable messages go on the connection.
    case unavailable
    /// The peer does not probe (an earlier version): datagrams go to its endpoint unchecked.
    case unchecked
    /// Probed: the verdict and its figures. Unreliable messages go by UDP only once it is `.open`.
    case checked(DatagramPathStateMachine.Summary)
}
