import PeerConnectivityCore

/// A connection closed, or was already closed, so the operation could not complete.
package struct ConnectionClosedError: Error, Hashable, CustomStringConvertible {
    /// Why the connection closed.
    package var reason: DisconnectReason
    /// The peer, when it was known.
    package var peer: PeerID?

    package init(reason: DisconnectReason, peer: PeerID?) {
        self.reason = reason
        self.peer = peer
    }

    package var description: String {
        if let peer { return "connection to \(peer) closed: \(reason)" }
        return "connection closed: \(reason)"
    }
}
