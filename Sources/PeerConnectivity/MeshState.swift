import PeerConnectivityCore
import PeerConnectivityTransport

/// What a session knows to keep itself a full mesh (see `SessionCore+Mesh.swift`).
struct MeshState {
    /// The session's own listener for connections from other members, once bound.
    var listener: ConnectionListener?
    var closed = false
    /// Connections established before the listener was bound: told its port once it is.
    var waiting: [Connection] = []
    /// Where each connected member's session accepts members (its address as this side sees it),
    /// and over which connection this side learned it.
    var endpoints: [PeerID: (member: Frame.Member, connection: ObjectIdentifier)] = [:]
    /// Members that a member introduced (MEMBERS): they may connect to this session, and it to them.
    /// Forgotten when the introducer's connection closes.
    var introduced: [PeerID: (member: Frame.Member, introducer: ObjectIdentifier)] = [:]
    /// Dials under way to members introduced over each connection: at most
    /// ``SessionCore/maximumDialsPerIntroducer`` at once.
    var dialsInFlight: [ObjectIdentifier: Int] = [:]
    /// Connections to the listener from peers not introduced yet, held for a moment: the
    /// introduction may still be on its way.
    var pending: [PeerID: Connection] = [:]
}
