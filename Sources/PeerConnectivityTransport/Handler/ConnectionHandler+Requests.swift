import NIOCore
import PeerConnectivityCore

/// What the ``Connection`` asks of its handler, on the event loop: writing its queues, answering
/// the invitation, closing, reading again.
extension ConnectionHandler {
    /// Writes queued frames while the channel is writable, with one flush: messages and control
    /// frames first, then channel frames up to one batch (see ``bulkBatchLimit``).
    ///
    /// A drain that wrote channel frames waits for its last write: until then no channel frame is
    /// taken, so a message queued meanwhile waits behind at most one batch. Encrypted, every drain
    /// waits so, and nothing at all is taken meanwhile: TLS encrypts a flush into one buffer, which it
    /// clears for the next flush; while the socket still held it, clearing copied it on write into
    /// fresh memory the size of the flush, page faults included.
    ///
    /// The replies a read took (``readReplies``) go first: each was given while nothing waited in the
    /// queue, so whatever the queue holds now came after it.
    ///
    /// - Parameter takingQueued: whether to take from the connection's queue; `false` after a read that
    ///   queued nothing there (its replies only): a frame queued since by another thread scheduled a
    ///   drain of its own.
    func drainOutgoing(takingQueued: Bool = true) {
        guard let context, let connection else { return }
        let encrypted = stateMachine.isEncrypted
        guard !(encrypted && writeInFlight) else { return }
        var bulkLength = 0
        // What the event loop's turn leaves: a writer on the loop and its drains would otherwise run, task after
        // task, until credit ran out, and every connection of the loop waited to be read (``WriteTurnBudget``).
        let turnRoom = writeTurn?.room ?? .max
        let bulkLimit = writeInFlight ? 0 : min(bulkBatchLimit, unsentGateRoom(context: context), turnRoom)
        // Held back one step, so that the drain's last write can carry the promise.
        var last: ByteBuffer?
        func hold(_ frame: ByteBuffer) {
            if let last { send(last, context: context, promise: nil) }
            last = frame
        }
        if !readReplies.isEmpty {
            for frame in readReplies { hold(frame) }
            if readReplies.count == 1 {
                // A read's usual one reply: cheaper off the end than by emptying the array (a replaceSubrange).
                readReplies.removeLast()
            } else {
                readReplies.removeAll(keepingCapacity: readReplies.capacity <= Self.keptBatchCapacity)
            }
        }
        taking: while takingQueued, context.channel.isWritable,
            let work = connection.takeNext(
                bulkAllowed: bulkLength < bulkLimit,
                settling: !encrypted,
                into: &urgentBatch
            )
        {
            switch work {
            case .urgent(let settled):
                for frame in urgentBatch { hold(frame) }
                emptyUrgentBatch()
                // Encrypted, the queue is not asked again, nor settled by the taking: it would mark itself
                // idle, and every send until this batch is written would then schedule a drain that cannot
                // take anything.
                if encrypted || settled { break taking }
            case .bulk(let frame):
                hold(frame.head)
                if let payload = frame.payload { hold(payload) }
                bulkLength += frame.readableBytes
            }
        }
        if let writeTurn {
            if bulkLength > 0 { writeTurn.wrote(bulkLength) }
            // The turn, not the batch or the gate, stopped the channel frames: go on in the next one.
            if !writeInFlight, bulkLength >= turnRoom, turnRoom <= bulkBatchLimit { writeTurn.wait(self) }
        }
        guard let last else { return }
        if bulkLength > 0 || encrypted {
            writeInFlight = true
            let written = context.eventLoop.makePromise(of: Void.self)
            send(last, context: context, promise: written)
            written.futureResult.assumeIsolated().whenComplete { [self, bulkLength] _ in
                writeInFlight = false
                if bulkLength > 0 {
                    bulkBatchLimit =
                        flushing ? min(2 * bulkBatchLimit, Self.largestBulkBatchLength) : Self.bulkBatchLength
                }
                drainOutgoing()
            }
        } else {
            send(last, context: context, promise: nil)
        }
        let outer = flushing
        flushing = true
        metrics.flushSent()
        context.flush()
        flushing = outer
    }

    /// Whether ``Connection/enqueue(_:)``, called from this read, may give its frame to ``readReplies``: while
    /// the socket takes writes and the read's drain can write them at once (encrypted, not while a write
    /// is on its way). Otherwise frames wait in the queue, whose high watermark pauses reading.
    var takesReplies: Bool {
        guard let context, context.channel.isWritable else { return false }
        return !(writeInFlight && stateMachine.isEncrypted)
    }

    /// Lets go of the frames of ``urgentBatch``, written: its room is kept for the next batch unless a
    /// burst made it larger than ``keptBatchCapacity``.
    func emptyUrgentBatch() {
        urgentBatch.removeAll(keepingCapacity: urgentBatch.capacity <= Self.keptBatchCapacity)
    }

    /// The bytes of channel frames the ``unsentGate`` lets this drain write: all when there is none or the
    /// kernel does not tell; none while it holds them back, with a look again scheduled.
    private func unsentGateRoom(context: ChannelHandlerContext) -> Int {
        guard let unsentGate, let info = readKernelFigures(context.channel) else { return .max }
        switch unsentGate.decide(notSentBytes: Int(info.notSentBytes), deliveryRate: info.deliveryRateBytesPerSecond) {
        case .write(let room):
            return room
        case .wait(let wait):
            if unsentRecheck == nil {
                unsentRecheck = context.eventLoop.assumeIsolated().scheduleTask(in: wait) { [self] in
                    unsentRecheck = nil
                    drainOutgoing()
                }
            }
            return 0
        }
    }

    /// Holds the kernel's unsent bytes at `lowWatermark` (`TCP_NOTSENT_LOWAT`) and, when `gated`, this
    /// connection's channel frames with them (``UnsentBytesGate``); on the event loop.
    ///
    /// - Parameters:
    ///   - channel: the connection's channel.
    ///   - lowWatermark: the bytes, at least ``Connection/minimumUnsentBytes``.
    ///   - gated: whether channel frames wait while the kernel holds more than that unsent.
    /// - Throws: the socket option's error.
    func limitUnsentBytes(of channel: any Channel, to lowWatermark: Int, gated: Bool) throws {
        try Connection.limitUnsentBytes(of: channel, to: lowWatermark)
        unsentGate = gated ? UnsentBytesGate(lowWatermark: lowWatermark) : nil
    }

    func grantCredit(_ increment: Int, on channel: UInt32) {
        run(stateMachine.grantCredit(increment, on: channel))
    }

    func resetIncomingChannel(_ channel: UInt32, _ code: ChannelResetCode) {
        run(stateMachine.resetIncomingChannel(channel, code))
        sizeReceivePool()
    }

    func accept(
        delegate: any ConnectionDelegate,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) throws {
        try answer(
            stateMachine.accept(
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout,
                maximumMessageLength: maximumMessageLength
            ),
            pending: "invitation",
            delegate: delegate,
            maximumMessageLength: maximumMessageLength
        )
    }

    func acceptResume(
        delegate: any ConnectionDelegate,
        nextExpected: UInt64,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) throws {
        try answer(
            stateMachine.acceptResume(
                nextExpected: nextExpected,
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout
            ),
            pending: "resume",
            delegate: delegate,
            maximumMessageLength: maximumMessageLength
        )
    }

    /// Carries out the machine's answer to an accept: from now on the connection's events go to
    /// `delegate`, with its message limit.
    ///
    /// - Throws: ``ConnectionClosedError`` when the machine had nothing pending (`action` is `nil`).
    private func answer(
        _ action: ConnectionStateMachine.Action?,
        pending what: String,
        delegate: any ConnectionDelegate,
        maximumMessageLength: Int
    ) throws {
        guard let action else {
            // Closed meanwhile (a protocol violation, the peer's GOODBYE, ...): say why, not "timed out".
            throw ConnectionClosedError(
                reason: stateMachine.closeReason ?? .timedOut.with(detail: "the \(what) is no longer pending"),
                peer: stateMachine.peer
            )
        }
        self.delegate = delegate
        self.maximumMessageLength = maximumMessageLength
        run(action)
    }

    func decline(_ reason: DisconnectReason) {
        if let action = stateMachine.decline(reason) {
            run(action)
        }
    }

    func close(_ reason: DisconnectReason) {
        run(stateMachine.close(reason))
    }

    func resumeReading() {
        guard stateMachine.isReadingPaused else { return }
        stateMachine.readingPaused(false)
        if readPending, let context {
            readPending = false
            context.read()
        }
    }
}
