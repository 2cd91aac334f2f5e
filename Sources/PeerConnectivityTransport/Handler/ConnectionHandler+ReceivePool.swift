import NIOCore

/// How many of its receive buffers the socket keeps to read into again.
///
/// NIO reads into a buffer of its pool that nothing else holds any more, and allocates a new one when
/// every pooled buffer is still held; it pools as many as the channel's `maxMessagesPerRead`, 4 unless
/// set. A resource's chunks are slices of the reads they came in and wait, with them, for the file queue:
/// with 4 buffers pooled nearly every read had a new one, memory the allocator had just handed back to
/// the kernel, and a receiver faulted in about 300 MiB of fresh pages a GiB received (81,519 faults in one
/// transfer on an AMD EPYC virtual machine, 7,676-15,097 with 64 pooled). So while the peer sends resources
/// or folders the pool holds ``ConnectionConfiguration/blockReceivePool`` buffers, as many reads as the
/// file queue may hold back, and once none is open it shrinks back, letting the others go, so that a
/// connection does not keep a window's worth of buffers for good after one transfer.
extension ConnectionHandler {
    /// Sizes the receive pool for the channels the peer has open; on the event loop, after a channel frame
    /// that opens or ends one of the peer's channels.
    func sizeReceivePool() {
        let wanted =
            stateMachine.receivesBlocks ? ConnectionConfiguration.blockReceivePool : ConnectionConfiguration.receivePool
        guard wanted != receivePool, let channel = context?.channel else { return }
        receivePool = wanted
        // A channel without synchronous options (an embedded one in a test) keeps NIO's pool.
        try? channel.syncOptions?.setOption(.maxMessagesPerRead, value: UInt(wanted))
    }
}
