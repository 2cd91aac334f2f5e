import Logging
import NIOCore
import PeerConnectivityCore

/// Carrying out what the ``ConnectionStateMachine`` returns: ``run(_:)``, the one switch over its actions.
extension ConnectionHandler {
    /// The channel is active: the machine says what goes out first and which deadline starts.
    func start() {
        let action = stateMachine.channelActive()
        if action != .none { metrics.connectionOpened() }
        run(action)
    }

    /// Carries out one action of the state machine; the machine has decided everything it says.
    ///
    /// - Parameter action: what the machine returned for an event.
    func run(_ action: ConnectionStateMachine.Action) {
        guard let context, let connection else { return }
        switch action {
        case .none:
            break

        case .deliverData(let payload, let peer):
            guard let delegate else { return }
            if delegate.connection(connection, handle: .message(payload, from: peer)) == .pause {
                stateMachine.readingPaused(true)
            }

        case .deliverDatagramEndpoint(let port, let token, let peer):
            report(.datagramEndpoint(port: port, token: token, from: peer), on: connection)

        case .deliverDatagramKey(let key, let peer):
            report(.datagramKey(key, from: peer), on: connection)

        case .deliverMembership(let frame, let peer):
            report(.membership(frame, from: peer), on: connection)

        case .channel(let event, let peer):
            switch event {
            case .opened(let open):
                sizeReceivePool()
                report(.channel(.opened(open), from: peer), on: connection)
            case .received(let channel, let bytes):
                report(.channel(.received(channel: channel, bytes), from: peer), on: connection)
            case .ended(let channel, let digest):
                sizeReceivePool()
                // A large message is delivered here, and counts toward the receive backlog.
                let event = ConnectionEvent.channel(.ended(channel: channel, digest: digest), from: peer)
                if delegate?.connection(connection, handle: event) == .pause {
                    stateMachine.readingPaused(true)
                }
            case .reset(let channel, let code):
                sizeReceivePool()
                report(.channel(.reset(channel: channel, code), from: peer), on: connection)
            case .credited(let channel, let increment): connection.credited(increment, on: channel)
            case .done(let channel): connection.confirmDone(channel)
            case .block(let channel, let index, let digest):
                report(.channel(.block(channel: channel, index: index, digest: digest), from: peer), on: connection)
            case .have(let channel, let have): connection.receivedHave(have, on: channel)
            case .refuse(let channel, let code, let reason):
                warnings.warn("refused channel \(channel) from \(peer): \(reason)", to: logger)
                run(.send([.reset(channel: channel, code)]))
            case .none, .violation: break  // handled by the state machine
            }

        case .resetByPeer(let channel, let code):
            connection.resetByPeer(channel, code)

        case .send(let frames):
            for frame in frames {
                send(
                    FrameEncoder.buffer(for: frame, allocator: context.channel.allocator),
                    context: context,
                    promise: nil
                )
            }
            metrics.flushSent()
            context.flush()

        case .scheduleDeadline(let timeout, let frames):
            scheduleDeadline(after: timeout, context: context)
            run(.send(frames))

        case .peerIdentified(let peer, let frames):
            logger[metadataKey: "peer"] = "\(peer)"
            report(.identified(peer), on: connection)
            if !frames.isEmpty {
                run(.send(frames))
            }

        case .startTLS(let asClient):
            startTLS(asClient: asClient, context: context)

        case .decideCertificate(let peer, let code, let frames, let deadline):
            if !frames.isEmpty {
                run(.send(frames))
            }
            if let deadline {
                scheduleDeadline(after: deadline, context: context)
            }
            decideCertificate(peer: peer, pairingCode: code, connection: connection)

        case .deliverInvitation(let peer, let invitationContext, let timeout):
            logger[metadataKey: "peer"] = "\(peer)"
            scheduleDeadline(after: timeout, context: context)
            handshakeFinishedPromise.succeed()
            report(.invitation(from: peer, context: invitationContext, timeout: timeout), on: connection)

        case .establish(let peer, let frame, let finishingHandshake):
            establish(context: context)
            let peerFields = stateMachine.peerFields
            connection.peerFields.withLock { $0 = peerFields }
            logger.debug("connected")
            // The owner learns first, then ACCEPT goes out: when the inviter sees ACCEPT, this side
            // already counts the peer as connected. (Frames the owner queues now are drained after.)
            report(.established(peer), on: connection)
            establishedPromise.succeed(peer)
            if finishingHandshake { handshakeFinishedPromise.succeed() }
            if let frame { write(frame, context: context) }

        case .establishResumed(let peer, let peerExpects, let frame, let finishingHandshake):
            establish(context: context)
            metrics.linkResumed()
            if let frame { write(frame, context: context) }
            logger.debug("link resumed")
            report(.resumed(peer, peerExpects: peerExpects), on: connection)
            establishedPromise.succeed(peer)
            if finishingHandshake { handshakeFinishedPromise.succeed() }

        case .deliverResume(let peer, let secret, let peerExpects, let deadline):
            logger[metadataKey: "peer"] = "\(peer)"
            scheduleDeadline(after: deadline, context: context)
            handshakeFinishedPromise.succeed()
            report(.resumeRequested(from: peer, secret: secret, peerExpects: peerExpects), on: connection)

        case .deliverResumeSecret(let secret, let peer):
            report(.resumeSecret(secret, from: peer), on: connection)

        case .deliverAck(let count, let peer):
            report(.acknowledged(count, from: peer), on: connection)

        case .close(let reason, let frame):
            cancelTimers()
            metrics.closing(reason, sending: frame)
            connection.refuseNewSends(ConnectionClosedError(reason: reason, peer: stateMachine.peer))
            if Self.reasonsWorthAWarning.contains(reason) {
                warnings.warn("closing connection: \(reason)", to: logger)
            } else {
                logger.debug("closing connection: \(reason)")
            }
            // Data queued before the close goes out first (this read's replies before the queue's), then the
            // GOODBYE or DECLINE.
            for buffer in readReplies { send(buffer, context: context, promise: nil) }
            readReplies.removeAll()
            while let work = connection.takeNext(bulkAllowed: true, into: &urgentBatch) {
                switch work {
                case .urgent:
                    for buffer in urgentBatch { send(buffer, context: context, promise: nil) }
                    emptyUrgentBatch()
                case .bulk(let frame):
                    send(frame.head, context: context, promise: nil)
                    if let payload = frame.payload { send(payload, context: context, promise: nil) }
                }
            }
            guard let frame else {
                context.close(promise: nil)
                return
            }
            let lingers = ConnectionStateMachine.lingers(
                after: frame,
                encrypted: stateMachine.isEncrypted || pendingTLS != nil
            )
            let written = context.eventLoop.makePromise(of: Void.self)
            send(
                FrameEncoder.buffer(for: frame, allocator: context.channel.allocator),
                context: context,
                promise: written
            )
            metrics.flushSent()
            context.flush()
            let grace = context.eventLoop.assumeIsolated().scheduleTask(in: Self.goodbyeGracePeriod) {
                context.close(promise: nil)
            }
            written.futureResult.assumeIsolated().whenComplete { result in
                grace.cancel()
                guard lingers, case .success = result else {
                    context.close(promise: nil)
                    return
                }
                self.linger(context: context)
            }

        case .reportClosed(let peer, let reason, let finishingHandshake, let neverEstablished):
            metrics.connectionClosed(reason)
            cancelTimers()
            let error = ConnectionClosedError(reason: reason, peer: peer)
            connection.markClosed(error)
            readReplies.removeAll()
            logger.debug("connection closed: \(reason)")
            report(.closed(peer: peer, reason: reason), on: connection)
            if neverEstablished { establishedPromise.fail(error) }
            if finishingHandshake { handshakeFinishedPromise.succeed() }
            closedPromise.succeed()
            // Break the cycle connection -> channel -> pipeline -> handler -> connection.
            self.delegate = nil
            self.connection = nil
        }
    }

    /// Hands `event` to the event handler; an answer can only matter for a message, or a channel's end
    /// (see ``run(_:)``).
    func report(_ event: ConnectionEvent, on connection: Connection) {
        _ = delegate?.connection(connection, handle: event)
    }

    /// The handshake is done: stop its deadline, widen the frame limit, start keepalives.
    func establish(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        metrics.handshakeCompleted()
        frameLengthLimit.value = WireProtocol.maximumFrameLength(forMessageLength: maximumMessageLength)
        stateMachine.acceptMessages(upTo: maximumMessageLength)
        scheduleKeepalive(context: context)
    }

    /// Writes and flushes one frame at once, ahead of the connection's queues.
    func write(_ frame: Frame, context: ChannelHandlerContext) {
        send(FrameEncoder.buffer(for: frame, allocator: context.channel.allocator), context: context, promise: nil)
        metrics.flushSent()
        context.flush()
    }

    /// Writes `buffer` towards the socket (not flushed), counted for the metrics: every write of the
    /// handler goes through here.
    func send(_ buffer: ByteBuffer, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        metrics.sent(buffer)
        context.write(wrapOutboundOut(buffer), promise: promise)
    }
}

extension ConnectionHandler {
    /// The GOODBYE of an orderly close is written: shuts down the output (the peer reads the GOODBYE, then
    /// the end of the stream) and reads on, dropping what comes, until the peer closes (NIO then closes
    /// the channel) or ``lingerPeriod`` ends. A full close now, with input unread, would reset the
    /// connection and drop what the kernel had not sent yet.
    func linger(context: ChannelHandlerContext) {
        lingering = true
        readerStopped = true
        let shutdown = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: shutdown)
        shutdown.futureResult.assumeIsolated().whenComplete { result in
            guard case .success = result else {
                // A channel that cannot half close (or is closing already) closes whole.
                context.close(promise: nil)
                return
            }
            self.lingerLimit = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerPeriod) {
                context.close(promise: nil)
            }
            if self.readPending {
                self.readPending = false
                context.read()
            }
        }
    }
}
