import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Where a resource is being written now: its connection and channel. Both change when the resource
/// is opened again (after a block mismatch, or on the new connection of a resumed link); the
/// progress's cancellation handler resets whichever is current. Also what the transfer did so far
/// (``ResourceTransferStatistics``).
final class ResourceSendRecord: Sendable {
    private let value: Mutex<(connection: Connection, number: UInt32)>
    private let counts: Mutex<ResourceTransferStatistics>

    /// The record of a resource of `blocks` blocks opened as channel `number` of `connection`, its blocks
    /// digested with `digestKind`.
    init(_ connection: Connection, _ number: UInt32, blocks: Int, digestKind: BlockDigestKind) {
        value = Mutex((connection, number))
        var statistics = ResourceTransferStatistics(blocks: blocks)
        statistics.blockDigest = digestKind.protocolName
        counts = Mutex(statistics)
    }

    /// What the transfer did so far.
    var statistics: ResourceTransferStatistics { counts.withLock { $0 } }

    /// Counts what the transfer did.
    func count(_ body: (inout ResourceTransferStatistics) -> Void) {
        counts.withLock { body(&$0) }
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
