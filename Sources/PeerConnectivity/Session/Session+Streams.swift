import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

extension Session {
    /// Opens a byte stream to a connected peer, as MPC's `startStream(withName:toPeer:)`.
    ///
    /// The peer gets ``SessionEvent/streamReceived(_:)`` with the stream's name. Each stream has
    /// its own flow-control window, so a peer that stops reading one stream does not hold up the
    /// others, nor messages. A peer may have 256 streams and resources open towards this side at once.
    ///
    /// - Parameters:
    ///   - name: the stream's name, 1 to 16,384 bytes of UTF-8.
    ///   - peer: a connected peer.
    /// - Returns: the stream to write to.
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)``, or ``TransferError/nameTooLong(peer:name:)``.
    public func startStream(withName name: String, toPeer peer: PeerID) throws -> OutgoingStream {
        let nameBytes = Array(name.utf8)
        guard (1...WireProtocol.maximumChannelNameLength).contains(nameBytes.count) else {
            throw TransferError.nameTooLong(peer: peer, name: name)
        }
        let connection = try runtime.connection(to: peer)
        do {
            let channel = try connection.openChannel(kind: .stream, size: 0, name: nameBytes)
            return OutgoingStream(name: name, peer: peer, connection: connection, channel: channel)
        } catch let error as ConnectionClosedError {
            throw SessionError.peerNotConnected(peer, reason: error.reason)
        }
    }
}
