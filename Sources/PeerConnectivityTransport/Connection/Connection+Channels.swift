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
        let (channelNumber, scheduleDrain) = try outbound.withLock {
            state throws(ConnectionClosedError) -> (UInt32, Bool) in
            if let closed = state.closed { throw closed }
            let number = state.nextChannel
            state.nextChannel += 2
            let open = FrameEncoder.buffer(
                for: .open(Frame.Open(channel: number, kind: kind, size: size, name: name)),
                allocator: channel.allocator
            )
            var record = OutgoingChannel(awaitsDone: kind != .stream)
            record.queuedBytes = open.readableBytes
            state.channels[number] = record
            state.bulk.append(open, on: number)
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
                var record = try Self.record(channelNumber, in: state)
                guard record.canQueue(payloadLength: payloadLength, queueLimit: channelQueueLimit) else { return nil }
                record.credit -= payloadLength
                record.queuedBytes += frame.readableBytes
                state.channels[channelNumber] = record
                state.bulk.append(frame, on: channelNumber)
                return Self.claimDrain(&state)
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
    ///   - digest: its XXH64 digest (8 bytes).
    ///   - channelNumber: the resource's channel.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    package func startBlock(_ index: Int, digest: [UInt8], on channelNumber: UInt32) throws {
        let scheduleDrain = try outbound.withLock { state throws(ChannelClosedError) -> Bool in
            var record = try Self.record(channelNumber, in: state)
            let block = FrameEncoder.buffer(
                for: .block(channel: channelNumber, index: UInt32(index), digest: digest),
                allocator: channel.allocator
            )
            record.queuedBytes += block.readableBytes
            state.channels[channelNumber] = record
            state.bulk.append(block, on: channelNumber)
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
                try Self.record(channelNumber, in: state).have
            }
            if let have { return have }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                    do {
                        var record = try Self.record(channelNumber, in: state)
                        if record.have != nil { return .success(()) }
                        record.haveWaiter = continuation
                        state.channels[channelNumber] = record
                        return nil
                    } catch {
                        return .failure(error)
                    }
                }
                if let verdict { continuation.resume(with: verdict) }
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
        let waiter = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var record = state.channels[channelNumber], record.failure == nil, record.have == nil else {
                return nil
            }
            record.have = have
            let waiter = record.haveWaiter
            record.haveWaiter = nil
            state.channels[channelNumber] = record
            return waiter
        }
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
        let scheduleDrain = try outbound.withLock { state throws(ChannelClosedError) -> Bool in
            var record = try Self.record(channelNumber, in: state)
            let end = FrameEncoder.buffer(
                for: .end(channel: channelNumber, digest: digest),
                allocator: channel.allocator
            )
            record.queuedBytes += end.readableBytes
            state.channels[channelNumber] = record.awaitsDone ? record : nil
            state.bulk.append(end, on: channelNumber)
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
                let verdict = outbound.withLock { state -> Result<Void, any Error>? in
                    do {
                        var record = try Self.record(channelNumber, in: state)
                        if record.isDone {
                            state.channels[channelNumber] = nil
                            return .success(())
                        }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        record.doneWaiter = continuation
                        state.channels[channelNumber] = record
                        return nil
                    } catch {
                        return .failure(error)
                    }
                }
                if let verdict { continuation.resume(with: verdict) }
            }
        } onCancel: {
            let waiter = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
                let waiter = state.channels[channelNumber]?.doneWaiter
                state.channels[channelNumber]?.doneWaiter = nil
                return waiter
            }
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
        let (waiters, scheduleDrain) = outbound.withLock {
            state -> ([CheckedContinuation<Void, any Error>], Bool) in
            guard state.closed == nil, let record = state.channels.removeValue(forKey: channelNumber) else {
                return ([], false)
            }
            state.bulk.removeAll(on: channelNumber)
            guard record.openWritten, record.failure == nil else { return (record.continuations, false) }
            let reset = FrameEncoder.buffer(for: .reset(channel: channelNumber, code), allocator: channel.allocator)
            state.enqueue(reset)
            return (record.continuations, Self.claimDrain(&state))
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
        let waiter = outbound.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var record = state.channels[channelNumber], record.awaitsDone, record.failure == nil else {
                return nil
            }
            guard let waiter = record.doneWaiter else {
                record.isDone = true
                state.channels[channelNumber] = record
                return nil
            }
            state.channels[channelNumber] = nil
            return waiter
        }
        waiter?.resume()
    }
}
