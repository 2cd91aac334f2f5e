/// Where a peer stands in a ``Session``, as MPC's `MCSessionState`.
public enum PeerState: Hashable, Sendable, CustomStringConvertible {
    /// Not in the session (never was, left, declined, timed out or lost).
    case notConnected
    /// An invitation is under way.
    case connecting
    /// In the session: data can be sent to it.
    case connected

    /// "notConnected", "connecting" or "connected".
    public var description: String {
        switch self {
        case .notConnected: return "notConnected"
        case .connecting: return "connecting"
        case .connected: return "connected"
        }
    }
}
