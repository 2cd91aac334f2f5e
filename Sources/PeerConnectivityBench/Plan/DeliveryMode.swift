import PeerConnectivity

/// How the data test asks the session to deliver messages (MPC's send modes).
public enum DeliveryMode: String, Codable, CaseIterable, Sendable {
    /// `SendMode.reliable`: in order, nothing lost while connected.
    case reliable
    /// `SendMode.unreliable`: one UDP datagram per message, at most
    /// ``TestPlan/maximumUnreliableMessageSize`` bytes; may be lost, duplicated or reordered.
    case unreliable

    /// The library's send mode.
    public var sendMode: SendMode {
        switch self {
        case .reliable: return .reliable
        case .unreliable: return .unreliable
        }
    }
}
