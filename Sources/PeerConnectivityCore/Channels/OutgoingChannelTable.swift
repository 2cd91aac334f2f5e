/// The channels this side opened and writes (streams, resources, folders, large messages): the peer's credit on
/// each, the room in each one's queue, the order in which their frames reach the socket, and the answers the
/// peer owes (HAVE, DONE).
///
/// Pure, the sending counterpart of ``ChannelTable``: the connection keeps one under its lock, calls it for every
/// write, wait and answer, and carries out what it returns once the lock is released: resuming the waiters it
/// hands back, writing the frame it hands out. `Waiter` is whatever the connection suspends a task with;
/// `Queued` an encoded frame.
///
/// The rules:
/// - A chunk is queued only while the peer's credit covers its payload and the channel's queue holds less than
///   the queue limit; otherwise its writer waits. A waiting writer goes on when the credit covers what it waits
///   to queue and, if the queue held it back, once half the queue has gone to the socket (one wake-up per half a
///   queue, not per chunk).
/// - Channels take turns: one frame of each channel with frames queued, round-robin.
/// - A resource's sender waits for the peer's HAVE (the blocks it holds) and, after END, for its DONE; an answer
///   that comes first is kept for it. A second HAVE is ignored.
/// - The peer's RESET drops the channel's queued frames and fails everyone waiting on it; the record stays,
///   failed, until the owner lets go of it (``reset(_:)``), so that its next call says why.
/// - This side's reset drops the channel and its queued frames; the peer is told (RESET) only if the channel's
///   OPEN has gone to the socket and the peer has not reset it first.
/// - Once the connection is closing, every call on a channel fails; once closed, the queue is dropped and every
///   waiter fails.
package struct OutgoingChannelTable<Queued: QueuedFrame, Waiter> {
    /// What a caller that may have to wait is told.
    package enum Wait {
        /// Go on: what it waits for is there.
        case ready
        /// The channel or the connection has ended: throw this.
        case failed(ChannelClosedError)
        /// Wait: the table keeps the waiter and hands it back when it may go on, or must fail.
        case suspended
    }

    private var channels: [UInt32: OutgoingChannel<Waiter>] = [:]
    private var queue = BulkQueue<Queued>()
    private var nextChannel: UInt32
    /// Why the connection is closing or closed, once it is.
    private var closedReason: DisconnectReason?

    /// A table with no channel.
    ///
    /// - Parameter firstChannel: the number of this side's first channel (odd for the inviter, even for the
    ///   invitee); the next ones follow two apart.
    package init(firstChannel: UInt32) {
        self.nextChannel = firstChannel
    }

    /// Whether no channel frame waits for the socket.
    package var isQueueEmpty: Bool { queue.isEmpty }

    /// How many channels are open (including those whose sender waits for DONE, and those the peer reset that
    /// the owner has not let go of).
    package var count: Int { channels.count }

    // MARK: - Writing

    /// Opens a channel: numbers it and queues its OPEN frame.
    ///
    /// - Parameters:
    ///   - awaitsDone: whether the channel's record stays after its END, until the peer's DONE (a resource,
    ///     a folder or a message; not a stream).
    ///   - openFrame: makes the OPEN frame for the channel's number.
    /// - Returns: the channel's number.
    package mutating func open(awaitsDone: Bool, openFrame: (UInt32) -> Queued) -> UInt32 {
        let number = nextChannel
        nextChannel += 2
        let frame = openFrame(number)
        var record = OutgoingChannel<Waiter>(awaitsDone: awaitsDone)
        record.queuedBytes = frame.readableBytes
        channels[number] = record
        queue.append(frame, on: number)
        return number
    }

    // This and the other calls every chunk makes are specialized here for the connection's frames and
    // continuations (`@_specialize`): left generic across the module boundary, they cost the sender about a
    // tenth of its rate in runtime type lookups.

    /// Queues a CHUNK frame if the peer's credit covers its payload and the channel's queue has room.
    ///
    /// - Parameters:
    ///   - frame: the CHUNK frame.
    ///   - payloadLength: the bytes it carries, taken from the credit.
    ///   - channel: its channel.
    ///   - queueLimit: the most bytes a channel may have queued.
    /// - Returns: `false` when it was not queued: wait with ``waitToWrite(on:payloadLength:queueLimit:waiter:)``.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    @_specialize(exported:true,where Queued == QueuedChannelFrame, Waiter == CheckedContinuation<Void, any Error>)
    package mutating func queueChunk(
        _ frame: Queued,
        payloadLength: Int,
        on channel: UInt32,
        queueLimit: Int
    ) throws(ChannelClosedError) -> Bool {
        var record = try self.record(channel)
        guard record.canQueue(payloadLength: payloadLength, queueLimit: queueLimit) else { return false }
        record.credit -= payloadLength
        record.queuedBytes += frame.readableBytes
        channels[channel] = record
        queue.append(frame, on: channel)
        return true
    }

    /// Queues a frame that takes no credit after the channel's frames so far: a resource's BLOCK, or its END.
    /// After END a stream's record is gone; a resource's stays until the peer's DONE.
    ///
    /// - Parameters:
    ///   - frame: the frame.
    ///   - channel: its channel.
    ///   - isEnd: whether the frame is the channel's END.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    @_specialize(exported:true,where Queued == QueuedChannelFrame, Waiter == CheckedContinuation<Void, any Error>)
    package mutating func queue(_ frame: Queued, on channel: UInt32, isEnd: Bool = false) throws(ChannelClosedError) {
        var record = try self.record(channel)
        record.queuedBytes += frame.readableBytes
        channels[channel] = isEnd && !record.awaitsDone ? nil : record
        queue.append(frame, on: channel)
    }

    /// A writer whose chunk was not queued waits until it may try again.
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - payloadLength: the chunk's payload.
    ///   - queueLimit: the most bytes a channel may have queued.
    ///   - waiter: the writer, kept when it must wait.
    /// - Returns: `.ready` when it may try again at once.
    @_specialize(exported:true,where Queued == QueuedChannelFrame, Waiter == CheckedContinuation<Void, any Error>)
    package mutating func waitToWrite(
        on channel: UInt32,
        payloadLength: Int,
        queueLimit: Int,
        waiter: Waiter
    ) -> Wait {
        do {
            var record = try self.record(channel)
            if record.canQueue(payloadLength: payloadLength, queueLimit: queueLimit) { return .ready }
            record.writer = waiter
            record.writerNeeds = payloadLength
            channels[channel] = record
            return .suspended
        } catch {
            return .failed(error)
        }
    }

    /// Takes back a writer that waits (its task was cancelled).
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the writer, to fail; `nil` if none waits.
    package mutating func cancelWriter(on channel: UInt32) -> Waiter? {
        takeWaiter(\.writer, on: channel)
    }

    /// Takes the next channel frame for the socket, the channels taking turns.
    ///
    /// - Parameter queueLimit: the most bytes a channel may have queued.
    /// - Returns: the frame, and the writer it lets go on; `nil` when nothing is queued.
    @_specialize(exported:true,where Queued == QueuedChannelFrame, Waiter == CheckedContinuation<Void, any Error>)
    package mutating func takeNext(queueLimit: Int) -> (frame: Queued, writer: Waiter?)? {
        guard let (number, frame) = queue.popNext() else { return nil }
        guard var record = channels[number] else { return (frame, nil) }
        record.openWritten = true
        record.queuedBytes -= frame.readableBytes
        var writer: Waiter?
        // Woken once half the queue has gone, not as soon as one chunk has (a thread wake-up per
        // 64 KiB), and only when the credit lets it write.
        if record.writer != nil, record.credit >= record.writerNeeds, record.queuedBytes <= queueLimit / 2 {
            writer = record.writer
            record.writer = nil
        }
        channels[number] = record
        return (frame, writer)
    }

    // MARK: - The peer's answers

    /// The peer granted credit (CREDIT).
    ///
    /// - Parameters:
    ///   - increment: the bytes granted.
    ///   - channel: the channel.
    ///   - queueLimit: the most bytes a channel may have queued.
    /// - Returns: the writer it lets go on.
    @_specialize(exported:true,where Queued == QueuedChannelFrame, Waiter == CheckedContinuation<Void, any Error>)
    package mutating func credited(_ increment: UInt32, on channel: UInt32, queueLimit: Int) -> Waiter? {
        guard var record = channels[channel], record.failure == nil else { return nil }
        record.credit = min(record.credit + Int(increment), WireProtocol.maximumChannelWindow)
        // A writer the queue holds back is woken as the queue drains (see `takeNext`).
        var writer: Waiter?
        if record.canQueue(payloadLength: record.writerNeeds, queueLimit: queueLimit) {
            writer = record.writer
            record.writer = nil
        }
        channels[channel] = record
        return writer
    }

    /// A resource's sender asks for the peer's HAVE.
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the HAVE, once it has come; `nil` before.
    /// - Throws: ``ChannelClosedError`` when the channel or the connection has ended.
    package func have(on channel: UInt32) throws(ChannelClosedError) -> Frame.Have? {
        try record(channel).have
    }

    /// A resource's sender waits for the peer's HAVE.
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - waiter: the sender, kept when it must wait.
    /// - Returns: `.ready` when the HAVE has come.
    package mutating func waitForHave(on channel: UInt32, waiter: Waiter) -> Wait {
        do {
            var record = try self.record(channel)
            if record.have != nil { return .ready }
            record.haveWaiter = waiter
            channels[channel] = record
            return .suspended
        } catch {
            return .failed(error)
        }
    }

    /// The peer said which blocks of a resource it holds (HAVE). A second HAVE is ignored.
    ///
    /// - Parameters:
    ///   - have: the HAVE's body.
    ///   - channel: the channel.
    /// - Returns: the sender waiting for it.
    package mutating func receivedHave(_ have: Frame.Have, on channel: UInt32) -> Waiter? {
        guard var record = channels[channel], record.failure == nil, record.have == nil else { return nil }
        record.have = have
        let waiter = record.haveWaiter
        record.haveWaiter = nil
        channels[channel] = record
        return waiter
    }

    /// A resource's sender waits for the peer's DONE after END; once it has come, the channel is gone.
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - waiter: the sender, kept when it must wait.
    /// - Returns: `.ready` when the DONE has come.
    package mutating func waitForDone(on channel: UInt32, waiter: Waiter) -> Wait {
        do {
            var record = try self.record(channel)
            if record.isDone {
                channels[channel] = nil
                return .ready
            }
            record.doneWaiter = waiter
            channels[channel] = record
            return .suspended
        } catch {
            return .failed(error)
        }
    }

    /// Takes back a sender that waits for DONE (its task was cancelled); the channel stays open.
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the sender, to fail; `nil` if none waits.
    package mutating func cancelDoneWaiter(on channel: UInt32) -> Waiter? {
        takeWaiter(\.doneWaiter, on: channel)
    }

    /// Takes the waiter a channel keeps in `slot`, leaving the slot empty.
    private mutating func takeWaiter(
        _ slot: WritableKeyPath<OutgoingChannel<Waiter>, Waiter?>,
        on channel: UInt32
    ) -> Waiter? {
        let waiter = channels[channel]?[keyPath: slot] ?? nil
        channels[channel]?[keyPath: slot] = nil
        return waiter
    }

    /// The peer confirmed a resource (DONE): kept for its sender, or handed to it if it waits (then the
    /// channel is gone).
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the sender waiting for it.
    package mutating func confirmedDone(on channel: UInt32) -> Waiter? {
        guard var record = channels[channel], record.awaitsDone, record.failure == nil else { return nil }
        guard let waiter = record.doneWaiter else {
            record.isDone = true
            channels[channel] = record
            return nil
        }
        channels[channel] = nil
        return waiter
    }

    // MARK: - Ending

    /// The peer reset a channel this side writes (RESET): its queued frames are dropped, and whoever waits on it
    /// fails; later calls on it fail the same way until the owner resets it.
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - code: the peer's reason.
    /// - Returns: the waiters to fail, and the error to fail them with.
    package mutating func resetByPeer(
        _ channel: UInt32,
        _ code: ChannelResetCode
    ) -> (waiters: [Waiter], error: ChannelClosedError) {
        let error = ChannelClosedError(channel: channel, cause: .reset(code, byPeer: true))
        guard var record = channels[channel], record.failure == nil else { return ([], error) }
        queue.removeAll(on: channel)
        let waiters = record.waiters
        record.writer = nil
        record.doneWaiter = nil
        record.haveWaiter = nil
        record.queuedBytes = 0
        record.failure = error
        channels[channel] = record
        return (waiters, error)
    }

    /// This side ends a channel it opened, early: the channel and its queued frames are dropped.
    ///
    /// - Parameter channel: the channel.
    /// - Returns: the waiters to fail, and whether the peer must be told (RESET): only when it knows the channel
    ///   (its OPEN went out) and did not reset it first. Nothing while the connection is closing.
    package mutating func reset(_ channel: UInt32) -> (waiters: [Waiter], tellPeer: Bool) {
        guard closedReason == nil, let record = channels.removeValue(forKey: channel) else { return ([], false) }
        queue.removeAll(on: channel)
        return (record.waiters, record.openWritten && record.failure == nil)
    }

    /// The connection is closing: every later call on a channel fails, and what is queued stays, to be written
    /// before the GOODBYE.
    ///
    /// - Parameter reason: why.
    package mutating func refuseNewWrites(_ reason: DisconnectReason) {
        if closedReason == nil { closedReason = reason }
    }

    /// The connection closed: the queue is dropped, and every channel with it.
    ///
    /// - Parameter reason: why: the waiters fail with it; later calls with the first reason given.
    /// - Returns: everyone who waited on a channel, with the error to fail each with.
    package mutating func close(_ reason: DisconnectReason) -> [(waiter: Waiter, error: ChannelClosedError)] {
        if closedReason == nil { closedReason = reason }
        queue.removeAll()
        let waiters = channels.flatMap { number, record in
            record.waiters.map { ($0, ChannelClosedError(channel: number, cause: .connectionClosed(reason))) }
        }
        channels = [:]
        return waiters
    }

    /// The record of an open channel; throws if it has ended (reset by either side, or finished) or the
    /// connection has.
    private func record(_ number: UInt32) throws(ChannelClosedError) -> OutgoingChannel<Waiter> {
        if let closedReason {
            throw ChannelClosedError(channel: number, cause: .connectionClosed(closedReason))
        }
        guard let record = channels[number] else {
            throw ChannelClosedError(channel: number, cause: .reset(.cancelled, byPeer: false))
        }
        if let failure = record.failure { throw failure }
        return record
    }
}
