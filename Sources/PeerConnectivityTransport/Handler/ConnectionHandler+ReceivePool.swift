import NIOCore

/// How many of its receive buffers the socket keeps to read into again.
///
/// NIO reads into a buffer of its pool that nothing else holds any more, and allocates a new one when
/// every pooled buffer is still held; it pools as many as the channel's `maxMessagesPerRead`, 4 unless
/// set. A resource's chunks are slices of the reads they came in and wait, with them, for the file queue:
/// with 4 buffers pooled most reads had a new one, often memory the allocator had just handed back to the
/// kernel, faulted in again page by page (a reflector receiving 1 GiB on a 2-vCPU AMD EPYC virtual machine
/// took a median of 33,758 page faults with 4 pooled, 9,966 with 64, and its event loop 0.39 CPU seconds
/// against 0.32: `results/resources-2026-12-01-receive-pool/`). So while the peer sends resources or
/// folders the pool holds ``ConnectionConfiguration/blockReceivePool`` buffers, as many reads as the file
/// queue may hold back, and once none has been open for ``ConnectionConfiguration/receivePoolLinger`` it
/// shrinks back, letting the others go, so that a connection does not keep a window's worth of buffers for
/// good after one transfer. The linger is for the next transfer: each buffer NIO adds to its pool it also
/// copies once, whole, before reading into it (docs/design/DATA-PATH.md, "Receive pool"), so a pool grown
/// again for each of an application's files, sent one after another, cost every file that copy and its page
/// faults. The same option bounds the reads of one wake-up of the event loop (NIO reads until the socket is
/// empty or it has read that many times).
extension ConnectionHandler {
    /// Sizes the receive pool for the channels the peer has open; on the event loop, after a channel frame
    /// that opens or ends one of the peer's channels, and after this side resets one. It grows at once and
    /// shrinks after the linger, unless a block channel opens again before.
    func sizeReceivePool() {
        guard stateMachine.receivesBlocks else {
            guard receivePool != ConnectionConfiguration.receivePool, receivePoolShrink == nil else { return }
            guard receivePoolLinger > .zero, let loop = context?.eventLoop else {
                setReceivePool(ConnectionConfiguration.receivePool)
                return
            }
            receivePoolShrink = loop.assumeIsolated().scheduleTask(in: receivePoolLinger) { [self] in
                receivePoolShrink = nil
                if !stateMachine.receivesBlocks { setReceivePool(ConnectionConfiguration.receivePool) }
            }
            return
        }
        receivePoolShrink?.cancel()
        receivePoolShrink = nil
        setReceivePool(ConnectionConfiguration.blockReceivePool)
    }

    private func setReceivePool(_ wanted: Int) {
        guard wanted != receivePool, let channel = context?.channel else { return }
        receivePool = wanted
        // A channel without synchronous options (an embedded one in a test) keeps NIO's pool.
        try? channel.syncOptions?.setOption(.maxMessagesPerRead, value: UInt(wanted))
    }
}
