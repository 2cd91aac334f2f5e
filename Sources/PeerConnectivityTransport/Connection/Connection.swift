import Dispatch
import Logging
import NIOCore
import PeerConnectivityCore
import Synchronization

/// One TCP connection to a peer, usable from any thread.
///
/// Protocol work happens in the ``ConnectionHandler`` on the channel's event loop; this handle lets
/// Swift concurrency code send, accept, decline and close. Outbound frames wait in two queues that
/// the event loop drains: data messages and control frames first, in order, with one flush per batch
/// (`send` suspends while more than ``ConnectionConfiguration/outboundHighWatermark`` bytes wait);
/// then channel frames (streams, resources), one chunk per channel in turn, paced so that a large
/// transfer never sits in front of a message for long.
package final class Connection: Sendable {
    /// The channels this side writes (``OutgoingChannelTable``), over this module's frames and continuations.
    typealias Channels = OutgoingChannelTable<QueuedChannelFrame, CheckedContinuation<Void, any Error>>

    struct Outbound {
        var pending = CircularBuffer<ByteBuffer>()
        var pendingBytes = 0
        /// The channels this side writes, and their frames waiting for the socket.
        var channels: Channels
        /// A drain will run without further prompting: one is queued on the event loop, or the
        /// channel is not writable and will drain when it becomes writable.
        var drainScheduled = false
        var closed: ConnectionClosedError?
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// Whose turn it is to send a large message (see `Connection+Messages.swift`), and the senders waiting
        /// for it, by ticket.
        var messageTurns = LargeMessageTurns()
        var messageWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]

        init(firstChannel: UInt32) {
            self.channels = OutgoingChannelTable(firstChannel: firstChannel)
        }

        /// Queues a message or control frame, after those already queued.
        mutating func enqueue(_ buffer: ByteBuffer) {
            pending.append(buffer)
            pendingBytes += buffer.readableBytes
        }
    }

    /// An item for the socket, taken by the handler.
    enum OutgoingWork {
        /// Every queued message and control frame, in order, now in the batch given to
        /// ``Connection/takeNext(bulkAllowed:settling:into:)``; `settled` when nothing else could be taken,
        /// so that the queue counts itself idle already and the drain ends with this batch.
        case urgent(settled: Bool)
        /// One channel frame.
        case bulk(QueuedChannelFrame)
    }

    /// The channel this connection runs on.
    package let channel: any Channel

    /// The serial queue the connection's file work runs on, on the ``FileExecutor`` (the resources it
    /// receives target it with queues of their own): one thread at a time for one connection, whose
    /// bytes come from one socket anyway, so that work arriving together runs back to back instead of
    /// waking a thread for each resource. Nothing on it may wait for other work on it.
    package let fileQueue = DispatchQueue(label: "PeerConnectivity.connection.files", target: FileExecutor.queue)

    /// The event loop the connection runs on.
    package var eventLoop: any EventLoop { channel.eventLoop }
    /// The allocator of the connection's buffers.
    package var allocator: ByteBufferAllocator { channel.allocator }
    /// The peer's IP address as the socket says ("192.0.2.7", "fe80::1%eth0"; an IPv4 peer of a dual-stack
    /// socket as its IPv4 address, see ``Platform/addressText(_:)``); nil once it no longer does.
    package var remoteIPAddress: String? { channel.remoteAddress.flatMap(Platform.addressText) }
    /// This side's and the peer's address and port; nil once the socket no longer says.
    package var endpoints: (local: (host: String, port: Int), remote: (host: String, port: Int))? {
        guard let local = channel.localAddress, let remote = channel.remoteAddress,
            let localHost = Platform.addressText(local), let localPort = local.port,
            let remoteHost = Platform.addressText(remote), let remotePort = remote.port
        else { return nil }
        return ((localHost, localPort), (remoteHost, remotePort))
    }
    /// Succeeds with the peer when the handshake completes; fails with ``ConnectionClosedError``.
    package let established: EventLoopFuture<PeerID>
    /// Succeeds when the channel has closed and the event handler has been told.
    package let closed: EventLoopFuture<Void>
    /// Succeeds when the peer has done its part of the handshake (an invitee received its INVITE), or
    /// the connection was established or closed, whichever comes first. Never fails.
    package let handshakeFinished: EventLoopFuture<Void>

    /// How the connection is secured; set on the event loop before the invitation or the
    /// establishment is reported, so every event handler sees it.
    let security = Mutex(PeerSecurityInfo.unencrypted)

    /// How the connection is secured: encrypted or not, the peer's certificate, the pairing code.
    package var securityInfo: PeerSecurityInfo {
        get { security.withLock { $0 } }
        set { security.withLock { $0 = newValue } }
    }

    /// What the peer said of itself in its INVITE or ACCEPT; `nil` until the connection is established,
    /// and on a connection that resumed a link. Set on the event loop before the establishment is reported.
    let peerFields = Mutex<HandshakeFields?>(nil)

    /// The largest message the peer accepts on this connection, once established; `nil` on a connection
    /// that resumed a link (the link's first connection said it).
    package var peerMaximumMessageLength: Int? {
        peerFields.withLock { $0?.maximumMessageLength.map(Int.init) }
    }

    /// Whether the peer reads folder channels (``PeerConnectivityCore/ChannelKind/folder``), as its
    /// handshake said; `false` on a connection that resumed a link (the link's first connection said it).
    package var peerReadsFolders: Bool {
        peerFields.withLock { $0?.readsFolders ?? false }
    }

    /// Whether the peer probes its UDP path and answers probes (``PeerConnectivityCore/DatagramProbe``), as
    /// its handshake said; `false` on a connection that resumed a link (the link's first connection said it).
    package var peerProbesDatagrams: Bool {
        peerFields.withLock { $0?.probesDatagrams ?? false }
    }

    /// The hash of the connection's block digests, as the peer's handshake agreed
    /// (``PeerConnectivityCore/BlockDigestKind/init(agreedWith:)``); XXH64 on a connection that resumed a
    /// link (the link's first connection agreed on it).
    package var blockDigestKind: BlockDigestKind {
        BlockDigestKind(agreedWith: peerFields.withLock { $0 })
    }

    /// Buffers that channel chunks are copied into (``FrameEncoder/chunkFrame(channel:_:makeBuffer:)``),
    /// used again once written: ``sendChunk(_:payloadLength:on:)`` gives them back.
    package let sendBuffers = SendBufferPool()

    let outbound: Mutex<Outbound>
    let highWatermark: Int
    /// ``channelQueueLimit``, which ``limitUnsentBytes(to:)`` lowers.
    let channelQueueLimitValue: Atomic<Int>
    let handler: NIOLoopBound<ConnectionHandler>

    /// Bytes of one channel's frames that may wait for the socket before its writer suspends.
    var channelQueueLimit: Int { channelQueueLimitValue.load(ordering: .relaxed) }

    /// The most bytes one CHUNK frame on this connection carries: ``FrameEncoder/chunkPayloadLength``, less when
    /// its unsent bytes are bounded (``limitUnsentBytes(to:)``), so that a message waits behind less.
    package var chunkPayloadLimit: Int { min(FrameEncoder.chunkPayloadLength, channelQueueLimit) }

    init(
        channel: any Channel,
        handler: ConnectionHandler,
        highWatermark: Int,
        channelQueueLimit: Int,
        firstChannel: UInt32
    ) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        self.established = handler.establishedPromise.futureResult
        self.closed = handler.closedPromise.futureResult
        self.handshakeFinished = handler.handshakeFinishedPromise.futureResult
        self.highWatermark = highWatermark
        self.channelQueueLimitValue = Atomic(channelQueueLimit)
        self.outbound = Mutex(Outbound(firstChannel: firstChannel))
    }

    /// Queues an encoded frame for the peer, in order with every other frame queued before it.
    ///
    /// Returns once the frame is queued; suspends first while the queue is over its high watermark.
    ///
    /// - Parameter frame: an encoded frame (see ``FrameEncoder``).
    /// - Throws: ``ConnectionClosedError`` when the connection is closing or closed.
    package nonisolated(nonsending) func send(_ frame: EncodedFrame) async throws {
        let (claimedDrain, mustWait) = try queue(frame)
        // No lock of the caller's is held here: from a task on the event loop the frame is written at once,
        // without another pass through the loop's task queue.
        if claimedDrain { scheduleDrain() }
        if mustWait { try await waitForRoom() }
    }

    /// Accepts the pending invitation: the connection joins `delegate` (a session), with its settings.
    ///
    /// - Parameters:
    ///   - delegate: receives the connection's events from now on.
    ///   - keepaliveInterval: the session's keepalive interval.
    ///   - livenessTimeout: the session's liveness timeout.
    ///   - maximumMessageLength: the session's largest data message.
    /// - Throws: ``ConnectionClosedError`` when the invitation is no longer pending.
    package func accept(
        delegate: any ConnectionDelegate,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) async throws {
        let handler = self.handler
        try await channel.eventLoop.submit {
            try handler.value.accept(
                delegate: delegate,
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout,
                maximumMessageLength: maximumMessageLength
            )
        }.get()
    }

    /// Accepts the pending RESUME: the link continues on this connection, in `delegate` (a session).
    ///
    /// - Parameters:
    ///   - delegate: receives the connection's events from now on.
    ///   - nextExpected: how many reliable messages this side has received from the peer on the link.
    ///   - keepaliveInterval: the session's keepalive interval.
    ///   - livenessTimeout: the session's liveness timeout.
    ///   - maximumMessageLength: the session's largest data message.
    /// - Throws: ``ConnectionClosedError`` when the RESUME is no longer pending.
    package func acceptResume(
        delegate: any ConnectionDelegate,
        nextExpected: UInt64,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) async throws {
        let handler = self.handler
        try await channel.eventLoop.submit {
            try handler.value.acceptResume(
                delegate: delegate,
                nextExpected: nextExpected,
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout,
                maximumMessageLength: maximumMessageLength
            )
        }.get()
    }

    /// What ``enqueueWithoutWaking(_:)`` did.
    package struct Enqueued: Sendable {
        /// Whether the queueing claimed the drain: ``wake(after:)`` schedules it.
        fileprivate let claimedDrain: Bool
        /// Whether the queue is over its high watermark: then await ``waitUntilDrained()``.
        package let overHighWatermark: Bool
    }

    /// Puts an encoded frame in the outbound queue and wakes nothing, for a caller that queues under a
    /// lock of its own (the session, numbering reliable messages for reconnection, keeps its order with
    /// the connection's): no system call is made, and the caller calls ``wake(after:)`` once its lock is
    /// released.
    ///
    /// - Parameter frame: an encoded frame.
    /// - Throws: ``ConnectionClosedError`` when the connection is closing or closed.
    package func enqueueWithoutWaking(_ frame: EncodedFrame) throws(ConnectionClosedError) -> Enqueued {
        let (claimedDrain, mustWait) = try queue(frame)
        return Enqueued(claimedDrain: claimedDrain, overHighWatermark: mustWait)
    }

    /// Schedules the drain ``enqueueWithoutWaking(_:)`` claimed, if it claimed one.
    package func wake(after enqueued: Enqueued) {
        if enqueued.claimedDrain { scheduleDrain(batching: true) }
    }

    /// Puts `frame` in the outbound queue: whether the caller must schedule the drain, and whether the queue
    /// is now over its high watermark.
    private func queue(_ frame: EncodedFrame) throws(ConnectionClosedError) -> (drain: Bool, mustWait: Bool) {
        try outbound.withLock { state throws(ConnectionClosedError) -> (Bool, Bool) in
            if let closed = state.closed { throw closed }
            state.enqueue(frame.head)
            for chunk in frame.rest {
                state.enqueue(chunk)
            }
            return (Self.claimDrain(&state), state.pendingBytes > highWatermark)
        }
    }

    /// Waits until the outbound queue is below its high watermark (after ``enqueue(_:)`` said so).
    ///
    /// - Throws: ``ConnectionClosedError`` when the connection closes first.
    package func waitUntilDrained() async throws {
        try await waitForRoom()
    }

    /// Closes the socket at once, without GOODBYE and without writing what is queued, as a crash or a
    /// cut cable would: for tests of what happens when a link drops.
    package func abort() {
        channel.close(promise: nil)
    }

    /// Silences the connection for good, without closing it: nothing more is read from or written to
    /// the socket, as when a cable is cut; the liveness timeout then closes it (tests).
    package func silence() {
        let channel = self.channel
        channel.eventLoop.execute {
            try? channel.pipeline.syncOperations.addHandler(SilencingHandler(), position: .first)
        }
    }

    /// Declines the pending invitation and closes the connection. Does nothing if none is pending.
    ///
    /// - Parameter reason: sent to the inviter.
    package func decline(_ reason: DisconnectReason) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.decline(reason) }
    }

    /// Says GOODBYE after the data already queued, then closes.
    ///
    /// - Parameter reason: sent to the peer and reported to the event handler.
    package func close(_ reason: DisconnectReason) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.close(reason) }
    }

    /// Resumes reading from the socket after the event handler paused it.
    package func resumeReading() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.resumeReading() }
    }

    // MARK: - Helpers

    /// Marks a drain as scheduled; `true` if the caller must schedule it.
    static func claimDrain(_ state: inout Outbound) -> Bool {
        defer { state.drainScheduled = true }
        return !state.drainScheduled
    }

    /// Drains at once when called by a task on the connection's event loop (one running on
    /// ``EventLoopTaskExecutor``), else asks the event loop to. Never at once from the handler's own
    /// callbacks (no task there): what an event handler queues while the handler works must follow the frames
    /// the handler writes itself (ACCEPT after the session has counted the peer in, for one). Called from
    /// within the handler's read (an event handler answering a message, granting credit, confirming), the
    /// handler drains once the read's frames are handled: what the read queued goes out in one write, with
    /// no pass through the event loop's task queue.
    ///
    /// - Parameter batching: always ask the event loop, even from a task on it: for channel chunks,
    ///   so that what every writer on the loop queues in this turn goes out in one batch, not a write
    ///   per chunk; and for frames queued under a caller's lock, which must not write under it.
    func scheduleDrain(batching: Bool = false) {
        let handler = self.handler
        if channel.eventLoop.inEventLoop, handler.value.decoding {
            handler.value.drainAfterRead = true
        } else if !batching, channel.eventLoop.inEventLoop, withUnsafeCurrentTask(body: { $0 != nil }) {
            handler.value.drainOutgoing()
        } else {
            channel.eventLoop.execute { handler.value.drainOutgoing() }
        }
    }

    /// Waits until a chunk of `payloadLength` bytes may be tried again on the channel (credit and queue room).
    func waitToWrite(on channelNumber: UInt32, payloadLength: Int) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let wait = outbound.withLock { state -> Channels.Wait? in
                    // Cancelled before it asked: the cancellation handler found it nowhere.
                    if Task.isCancelled { return nil }
                    return state.channels.waitToWrite(
                        on: channelNumber,
                        payloadLength: payloadLength,
                        queueLimit: channelQueueLimit,
                        waiter: continuation
                    )
                }
                Self.resume(continuation, after: wait)
            }
        } onCancel: {
            let writer = outbound.withLock { $0.channels.cancelWriter(on: channelNumber) }
            writer?.resume(throwing: CancellationError())
        }
    }

    /// Resumes a continuation a channel wait did not keep: at once when ready, with the channel's error when
    /// it failed, with `CancellationError` when the wait was not asked for (`nil`, the task was cancelled).
    static func resume(
        _ continuation: CheckedContinuation<Void, any Error>,
        after wait: Channels.Wait?
    ) {
        switch wait {
        case .ready: continuation.resume()
        case .failed(let error): continuation.resume(throwing: error)
        case .suspended: break
        case nil: continuation.resume(throwing: CancellationError())
        }
    }

    func waitForRoom() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                if let closed = state.closed { return .failure(closed) }
                if state.pendingBytes <= highWatermark { return .success(()) }
                state.waiters.append(continuation)
                return nil
            }
            if let verdict { continuation.resume(with: verdict) }
        }
    }
}
