import PeerConnectivityCore
import PeerConnectivityTransport

/// What a session holds to keep itself a full mesh (see `SessionRuntime+Mesh.swift`): the decisions, and
/// the listener they are about.
struct MeshState {
    /// The mesh's decisions over this module's connections.
    var machine: MeshStateMachine<Connection>
    /// The session's own listener for connections from other members, once bound.
    var listener: ConnectionListener?

    init(localPeer: PeerID, maximumDialsPerIntroducer: Int) {
        self.machine = MeshStateMachine(localPeer: localPeer, maximumDialsPerIntroducer: maximumDialsPerIntroducer)
    }
}
