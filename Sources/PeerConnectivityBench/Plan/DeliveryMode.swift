/// How the data test asks the session to deliver messages (MPC's send modes).
public enum DeliveryMode: String, Codable, CaseIterable, Sendable {
    /// `SendMode.reliable`: in order, nothing lost while connected.
    case reliable
    /// `SendMode.unreliable`: not available until the library has it.
    case unreliable

    /// Why the mode cannot be used yet, or nil when it can.
    public var unavailableReason: String? {
        switch self {
        case .reliable: return nil
        case .unreliable: return "--mode unreliable is not available yet: the library has no unreliable mode"
        }
    }
}
