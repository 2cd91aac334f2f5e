import PeerConnectivityTransport

/// Identifies a channel within a session: its connection and its number.
struct TransferKey: Hashable {
    let connection: ObjectIdentifier
    let channel: UInt32

    init(_ connection: Connection, _ channel: UInt32) {
        self.connection = ObjectIdentifier(connection)
        self.channel = channel
    }
}
