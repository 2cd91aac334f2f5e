import NIOCore
import PeerConnectivityCore

/// Something the peer did on a channel it opened, for the ``ConnectionDelegate`` (``ConnectionEvent/channel(_:from:)``).
package enum IncomingChannelEvent: Sendable {
    /// The peer opened a channel (a stream or a resource). Bytes follow, up to the channel's window,
    /// which grows as this side calls ``Connection/grantCredit(_:on:)``.
    case opened(Frame.Open)
    /// The peer starts block `index` of a resource; its block digest is `digest`, and its bytes follow.
    case block(channel: UInt32, index: Int, digest: [UInt8])
    /// Bytes arrived on the channel.
    case received(channel: UInt32, ByteBuffer)
    /// The peer finished the channel; a resource's END carries its root digest.
    case ended(channel: UInt32, digest: [UInt8]?)
    /// The peer ended the channel early.
    case reset(channel: UInt32, ChannelResetCode)
}
