import NIOCore

/// The receiving end of a channel the peer opened (a stream or a resource), as the session's
/// connection delegate drives it. Called on the connection's event loop, in order; must not block.
protocol IncomingTransfer: AnyObject, Sendable {
    /// The name the peer gave the transfer.
    var name: String { get }
    /// Whether the session forgets it at END (a stream); a resource stays until it has been checked.
    var endsAtEnd: Bool { get }
    /// A resource's next bytes are block `index`, whose block digest is `digest` (BLOCK).
    func blockStarted(_ index: Int, digest: [UInt8])
    /// Bytes arrived, within the window.
    func received(_ bytes: ByteBuffer)
    /// The writer finished; a resource's root digest comes with it.
    func ended(digest: [UInt8]?)
    /// The transfer failed: the peer reset it, or the connection closed.
    func failed(_ error: TransferError)
}

extension IncomingTransfer {
    /// Only a resource has blocks; the channel table lets BLOCK come on no other channel.
    func blockStarted(_ index: Int, digest: [UInt8]) {}
}
