import NIOCore
import PeerConnectivityCore

/// Channels (streams and resources): the ones this side writes, and the ones the peer writes.
extension Connection {
    /// Opens a channel to write on: queues its OPEN frame.
    ///
    /// - Parameters:
    ///   - kind: a stream, a resource or a message (whose record stays until the peer's DONE).
    ///   - size: a resource's or a message's length; 0 for a stream.
    ///   - name: the channel's name, at most ``WireProtocol/maximumChannelNameLength`` bytes.
    /// - Returns: the channel's number.
    /// - Throws: ``ConnectionClosedError`` when the connection is closing or closed.
    package func openChannel(kind: ChannelKind, size: UInt64, name: [UInt8]) throws -> UInt32 {
        let allocator = channel.allocator
        let (channelNumber, scheduleDrain) = try outbound.withLock {
            state throws(ConnectionClosedError) -> (UInt32, Bool) in
            if let closed = state.closed { throw closed }
            let number = state.channels.open(awaitsDone: kind != .stream) { number in
                QueuedChannelFrame(
                    FrameEncoder.buffer(
                        for: .open(Frame.Open(channel: number, kind: kind, size: size, name: name)),
                        allocator: allocator
                    )
                )
            }
            return (number, Self.claimDrain(&state))
        }
        if scheduleDrain { self.scheduleDrain() }
        return channelNumber
    }

    /// Queues one CHUNK frame, suspending first until the peer's credit covers it and the channel's
    /// queue has room.
    ///
    /// - Parameters:
    ///   - frame: a CHUNK frame from ``FrameEncoder/chunkFrame(channel:_:allocator:)``.
    ///   - payloadLength: the bytes it carries.
    ///   - channelNumber: its channel, opened by ``openChannel(kind:size:name:)``.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended; `CancellationError`
    ///   when the task is cancelled while it waits.
    package func sendChunk(_ frame: ByteBuffer, payloadLength: Int, on channelNumber: UInt32) async throws {
        try await queueChunk(QueuedChannelFrame(frame), payloadLength: payloadLength, on: channelNumber)
        sendBuffers.recycle(frame)
    }

    /// Queues one CHUNK frame as its header and the payload itself, uncopied, as ``sendChunk(_:payloadLength:on:)``
    /// does: the socket writes the payload's bytes where they are, so the caller must not change them (a
    /// `ByteBuffer` the caller writes to again is copied first, as any shared one).
    ///
    /// - Parameters:
    ///   - header: the frame's header, from ``FrameEncoder/writeChunkHeader(channel:payloadLength:into:)``.
    ///   - payload: the bytes it carries.
    ///   - channelNumber: its channel, opened by ``openChannel(kind:size:name:)``.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended; `CancellationError`
    ///   when the task is cancelled while it waits.
    package func sendChunk(header: ByteBuffer, payload: ByteBuffer, on channelNumber: UInt32) async throws {
        let frame = QueuedChannelFrame(header: header, payload: payload)
        try await queueChunk(frame, payloadLength: payload.readableBytes, on: channelNumber)
    }

    private func queueChunk(_ frame: QueuedChannelFrame, payloadLength: Int, on channelNumber: UInt32) async throws {
        while true {
            let queued = try outbound.withLock { state throws(ChannelClosedError) -> Bool? in
                let queued = try state.channels.queueChunk(
                    frame,
                    payloadLength: payloadLength,
                    on: channelNumber,
                    queueLimit: channelQueueLimit
                )
                return queued ? Self.claimDrain(&state) : nil
            }
            guard let scheduleDrain = queued else {
                try await waitToWrite(on: channelNumber, payloadLength: payloadLength)
                continue
            }
            if scheduleDrain { self.scheduleDrain(batching: true) }
            return
        }
    }

    /// Queues a resource's BLOCK frame after the channel's chunks so far: the chunks queued next are
    /// block `index`. It takes no credit.
    ///
    /// - Parameters:
    ///   - index: the block.
    ///   - digest: its block digest (8 bytes, of the link's kind).
    ///   - channelNumber: the resource's channel.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    package func startBlock(_ index: Int, digest: [UInt8], on channelNumber: UInt32) throws {
        let block = FrameEncoder.buffer(
            for: .block(channel: channelNumber, index: UInt32(index), digest: digest),
            allocator: channel.allocator
        )
        let scheduleDrain = try outbound.withLock { state throws(ChannelClosedError) -> Bool in
            try state.channels.queue(QueuedChannelFrame(block), on: channelNumber)
            return Self.claimDrain(&state)
        }
        if scheduleDrain { self.scheduleDrain() }
    }

    /// Waits for the peer's HAVE, its answer to a resource's OPEN: the blocks it holds already.
    ///
    /// - Parameter channelNumber: the resource's channel.
    /// - Returns: the HAVE.
    /// - Throws: ``ChannelClosedError`` when the peer resets the channel or the connection ends first.
    package func waitForHave(on channelNumber: UInt32) async throws -> Frame.Have {
        while true {
            let have = try outbound.withLock { state throws(ChannelClosedError) -> Frame.Have? in
                try state.channels.have(on: channelNumber)
            }
            if let have { return have }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let wait = outbound.withLock { $0.channels.waitForHave(on: channelNumber, waiter: continuation) }
                Self.resume(continuation, after: wait)
            }
        }
    }

    /// The peer said which blocks of a resource this side sends it holds (HAVE): wakes
    /// ``waitForHave(on:)``. A second HAVE on the channel is ignored.
    ///
    /// - Parameters:
    ///   - have: the HAVE's body.
    ///   - channelNumber: the channel.
    package func receivedHave(_ have: Frame.Have, on channelNumber: UInt32) {
        let waiter = outbound.withLock { $0.channels.receivedHave(have, on: channelNumber) }
        waiter?.resume()
    }

    /// Queues the END frame after the channel's chunks. A stream's record ends here; a resource's
    /// stays until ``waitForDone(on:)`` sees the peer's verdict.
    ///
    /// - Parameters:
    ///   - channelNumber: the channel.
    ///   - digest: a resource's root digest; `nil` for a stream.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    package func finishChannel(_ channelNumber: UInt32, digest: [UInt8]?) throws {
        let end = FrameEncoder.buffer(for: .end(channel: channelNumber, digest: digest), allocator: channel.allocator)
        let scheduleDrain = try outbound.withLock { state throws(ChannelClosedError) -> Bool in
            try state.channels.queue(QueuedChannelFrame(end), on: channelNumber, isEnd: true)
            return Self.claimDrain(&state)
        }
        if scheduleDrain { self.scheduleDrain() }
    }

    /// Waits for the peer to confirm a resource or a message (DONE).
    ///
    /// - Parameter channelNumber: the channel.
    /// - Throws: ``ChannelClosedError`` when the peer resets it or the connection ends first;
    ///   `CancellationError` when the task is cancelled first (the channel stays open: the caller resets it).
    package func waitForDone(on channelNumber: UInt32) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let wait = outbound.withLock { state -> Channels.Wait? in
                    // Cancelled before it asked: the cancellation handler found it nowhere.
                    if Task.isCancelled { return nil }
                    return state.channels.waitForDone(on: channelNumber, waiter: continuation)
                }
                Self.resume(continuation, after: wait)
            }
        } onCancel: {
            let waiter = outbound.withLock { $0.channels.cancelDoneWaiter(on: channelNumber) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Ends a channel this side opened, early: drops what it has queued and tells the peer (RESET)
    /// if the peer already knows the channel. Whoever waits on it gets ``ChannelClosedError``.
    ///
    /// - Parameters:
    ///   - channelNumber: the channel.
    ///   - code: why, sent to the peer.
    package func resetChannel(_ channelNumber: UInt32, _ code: ChannelResetCode) {
        let error = ChannelClosedError(channel: channelNumber, cause: .reset(code, byPeer: false))
        let allocator = channel.allocator
        let (waiters, scheduleDrain) = outbound.withLock {
            state -> ([CheckedContinuation<Void, any Error>], Bool) in
            let (waiters, tellPeer) = state.channels.reset(channelNumber)
            guard tellPeer else { return (waiters, false) }
            state.enqueue(FrameEncoder.buffer(for: .reset(channel: channelNumber, code), allocator: allocator))
            return (waiters, Self.claimDrain(&state))
        }
        if scheduleDrain { self.scheduleDrain() }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: - Channels the peer writes

    /// This side's reader consumed `increment` bytes of a channel the peer opened: let it send more.
    ///
    /// - Parameters:
    ///   - increment: bytes consumed.
    ///   - channelNumber: the channel.
    package func grantCredit(_ increment: Int, on channelNumber: UInt32) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.grantCredit(increment, on: channelNumber) }
    }

    /// Ends a channel the peer opened, early (RESET): its reader stopped or cannot keep the data.
    ///
    /// - Parameters:
    ///   - channelNumber: the channel.
    ///   - code: why, sent to the peer.
    package func resetIncomingChannel(_ channelNumber: UInt32, _ code: ChannelResetCode) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.resetIncomingChannel(channelNumber, code) }
    }

    /// Sends a control frame about a channel the peer opened, ahead of any channel data: DONE for a
    /// resource kept, or RESET after its END (the digest did not match). Dropped once the connection closes.
    ///
    /// - Parameter frame: a DONE or RESET frame.
    package func sendControl(_ frame: Frame) {
        let scheduleDrain = outbound.withLock { state -> Bool in
            guard state.closed == nil else { return false }
            let buffer = FrameEncoder.buffer(for: frame, allocator: channel.allocator)
            state.enqueue(buffer)
            return Self.claimDrain(&state)
        }
        if scheduleDrain { self.scheduleDrain() }
    }

    /// The peer confirmed a resource this side sent (DONE): wakes ``waitForDone(on:)``.
    ///
    /// - Parameter channelNumber: the channel.
    package func confirmDone(_ channelNumber: UInt32) {
        let waiter = outbound.withLock { $0.channels.confirmedDone(on: channelNumber) }
        waiter?.resume()
    }
}
