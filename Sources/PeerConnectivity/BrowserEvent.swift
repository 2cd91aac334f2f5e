/// What a ``Browser`` sees, as MPC's foundPeer / lostPeer.
public enum BrowserEvent: Hashable, Sendable {
    /// A peer advertising the service appeared, with its discoveryInfo. Reported once per peer,
    /// however many interfaces and IP versions it is seen on.
    case found(PeerID, discoveryInfo: [String: String])
    /// A peer found earlier is no longer advertised on any interface.
    case lost(PeerID)
}
