import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Where a resource is being written now: its connection and channel. Both change when the resource
/// is opened again (after a block mismatch, or on the new connection of a resumed link); the
/// progress's cancellation handler resets whichever is current.
final class ResourceChannel: Sendable {
    private let value: Mutex<(connection: Connection, number: UInt32)>
    private let sent = Atomic<UInt64>(0)

    /// Bytes of the file queued on the wire so far, on every channel it was written on.
    var bytesSent: UInt64 { sent.load(ordering: .relaxed) }

    /// Counts `count` more bytes queued.
    func didSend(_ count: Int) {
        sent.add(UInt64(count), ordering: .relaxed)
    }

    init(_ connection: Connection, _ number: UInt32) {
        value = Mutex((connection, number))
    }

    /// The connection and channel number now.
    var current: (connection: Connection, number: UInt32) {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }

    /// Resets the current channel (the transfer is cancelled).
    func reset(_ code: ChannelResetCode) {
        let (connection, number) = current
        connection.resetChannel(number, code)
    }
}
