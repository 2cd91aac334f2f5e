/// The connection is closing: a GOODBYE or DECLINE may still be on its way, and the channel has not
/// closed yet. Every event but the channel's close does nothing.
struct ClosingState {
    /// The peer, when its HELLO had arrived.
    let peer: PeerID?
    /// Why, reported once the channel has closed.
    let reason: DisconnectReason
    /// Whether those waiting for the handshake were told it finished before the close began.
    let handshakeFinished: Bool
    /// Whether the connection was established before the close began.
    let wasEstablished: Bool

    /// The channel has closed: report the reason, and what those waiting on the connection still need.
    var closedAction: ConnectionStateMachine.Action {
        .reportClosed(
            peer: peer,
            reason: reason,
            finishingHandshake: !handshakeFinished,
            neverEstablished: !wasEstablished
        )
    }
}
