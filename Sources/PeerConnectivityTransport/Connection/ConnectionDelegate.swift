import PeerConnectivityCore

/// Whether a connection goes on reading from its socket after an event.
package enum ConnectionReadDemand: Sendable {
    /// Keep reading.
    case more
    /// Stop reading until ``Connection/resumeReading()``: the receiver is behind.
    case pause
}

/// Receives a ``Connection``'s events: one method, called on the connection's event loop, in order.
/// Implementations must not block.
package protocol ConnectionDelegate: AnyObject, Sendable {
    /// Handles `event`, which happened on `connection`.
    ///
    /// - Returns: ``ConnectionReadDemand/pause`` to stop reading; only a ``ConnectionEvent/message(_:from:)``
    ///   or a channel's end (a large message delivered) can pause, the answer to any other event is ignored.
    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand
}

extension ConnectionEvent {
    /// What a handler that takes no part in resumption does with a RESUME or a resumed link: it declines
    /// the request, and closes a link resumed into it (it never hands such a connection elsewhere).
    ///
    /// - Returns: `true` if `self` was such an event and has been answered.
    package func refuseResumption(on connection: Connection) -> Bool {
        switch self {
        case .resumeRequested:
            connection.decline(.resumeRefused.with(detail: "this side does not resume links"))
            return true
        case .resumed:
            connection.close(.resumeRefused)
            return true
        default:
            return false
        }
    }
}
