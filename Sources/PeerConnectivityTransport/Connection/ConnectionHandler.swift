import Logging
import NIOCore
import NIOSSL
import NIOTLS
import PeerConnectivityCore

/// Runs a ``ConnectionStateMachine`` on a channel: feeds it frames, timers and local decisions,
/// and carries out the actions it returns in one place, ``run(_:)``.
///
/// Inbound it decodes the bytes read itself, through a ``FrameReader`` (no decoding handler in
/// front: no pipeline step per read, no frame boxed per frame). Outbound it writes encoded frames
/// (`ByteBuffer`s) that it takes from its ``Connection``'s queue.
package final class ConnectionHandler: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// Bytes of channel frames written per batch; the next batch waits until this one has reached
    /// the socket, so a message queued meanwhile waits behind at most this much.
    static let bulkBatchLength = 256 << 10

    /// The largest batch: reached while the socket takes every batch at once (see `bulkBatchLimit`).
    static let largestBulkBatchLength = 1 << 20

    /// Reasons this side closes for that an operator must see: a broken or hostile peer, or a
    /// refused encryption (someone may be stripping it).
    static let reasonsWorthAWarning: Set<DisconnectReason> = [
        .protocolViolation, .incompatibleVersion, .encryptionRequired, .downgradeRefused,
    ]

    /// How long a GOODBYE may take to reach the socket before the channel is closed anyway.
    static let goodbyeGracePeriod = TimeAmount.seconds(2)

    let establishedPromise: EventLoopPromise<PeerID>
    /// Succeeds when the peer has done its part of the handshake (an invitee received INVITE), or the
    /// connection is established or closed: whichever comes first.
    let handshakeFinishedPromise: EventLoopPromise<Void>
    let closedPromise: EventLoopPromise<Void>

    private(set) var stateMachine: ConnectionStateMachine
    private var eventHandler: (any ConnectionEventHandler)?
    private var connection: Connection?
    private var context: ChannelHandlerContext?
    private var maximumMessageLength: Int
    private var logger: Logger
    /// The warnings about peers this handler's listener or session may still write.
    private let warnings: WarningBudget
    /// Shared with the frame decoder: small while handshaking, the message limit once connected.
    private let frameLengthLimit: FrameLengthLimit
    /// The bytes read and not decoded yet, and their decoder (a new one on the switch to TLS).
    private var reader: FrameReader
    /// ``channelRead(context:data:)`` is decoding: a switch to TLS waits until it is done.
    private var decoding = false
    /// Nothing more is decoded: after a malformed frame, or from the HELLO that switches to TLS
    /// until the TLS handler is in place.
    private var readerStopped = false
    /// The TLS handler to put in front once the frames already read are decoded.
    private var pendingTLS: NIOSSLHandler?
    private let security: ConnectionSecurity?
    /// The peer's certificate (DER), from the TLS verification callback.
    private var peerCertificate: [UInt8]?
    /// What the peer's certificate proved, until the pairing code completes it.
    private var verified: ConnectionSecurity.Verified?
    /// The cipher suite read from the server's first TLS record (see ``ServerHelloObserver``).
    private var cipherSuite: String?

    private var deadline: Scheduled<Void>?
    private var keepalive: Scheduled<Void>?
    /// A read the channel asked for while the state machine had reading paused.
    private var readPending = false
    /// The last write of a drain that must be written before the next (see ``drainOutbound()``) is on
    /// its way to the socket.
    private var writeInFlight = false
    /// Bytes of channel frames per batch: doubled, up to ``largestBulkBatchLength``, each time the
    /// socket takes a batch within the flush that wrote it (a fast link: fewer, larger writes); back to
    /// ``bulkBatchLength`` when a batch has to wait for the socket, so that on a slow link a message
    /// queued meanwhile waits behind one small batch.
    private var bulkBatchLimit = ConnectionHandler.bulkBatchLength
    /// ``drainOutbound()`` is flushing: a batch written now was taken by the socket at once.
    private var flushing = false

    init(
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        configuration: ConnectionConfiguration,
        handler eventHandler: any ConnectionEventHandler,
        eventLoop: any EventLoop
    ) {
        self.stateMachine = ConnectionStateMachine(
            localPeer: localPeer,
            role: role,
            keepaliveInterval: configuration.keepaliveInterval,
            livenessTimeout: configuration.livenessTimeout,
            handshakeTimeout: configuration.handshakeTimeout,
            certificateDecisionTimeout: configuration.security.flatMap { $0.decide == nil ? nil : $0.decisionTimeout },
            maximumInboundChannels: configuration.maximumInboundChannels,
            maximumInvitationTimeout: configuration.maximumInvitationTimeout,
            encryption: configuration.security?.preference ?? .none,
            encryptedBefore: configuration.encryptedBefore
        )
        self.security = configuration.security
        self.maximumMessageLength = configuration.maximumMessageLength
        self.eventHandler = eventHandler
        self.logger = configuration.logger
        self.warnings = configuration.warnings
        let frameLengthLimit = FrameLengthLimit(FrameLengthLimit.handshake)
        self.frameLengthLimit = frameLengthLimit
        self.reader = FrameReader(limit: frameLengthLimit)
        self.establishedPromise = eventLoop.makePromise()
        self.handshakeFinishedPromise = eventLoop.makePromise()
        self.closedPromise = eventLoop.makePromise()
    }

    /// Makes the pipeline of a new channel (this handler) and returns its handle.
    ///
    /// - Parameters:
    ///   - channel: the new channel, on its event loop.
    ///   - localPeer: this side's identity.
    ///   - role: inviter or invitee.
    ///   - configuration: limits and timers.
    ///   - eventHandler: receives the connection's events.
    /// - Returns: the connection's handle.
    /// - Throws: if the pipeline cannot be set up.
    static func install(
        on channel: any Channel,
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        configuration: ConnectionConfiguration,
        handler eventHandler: any ConnectionEventHandler
    ) throws -> Connection {
        let handler = ConnectionHandler(
            localPeer: localPeer,
            role: role,
            configuration: configuration,
            handler: eventHandler,
            eventLoop: channel.eventLoop
        )
        let connection = Connection(
            channel: channel,
            handler: handler,
            highWatermark: configuration.outboundHighWatermark,
            channelQueueLimit: configuration.channelQueueLimit,
            firstChannel: handler.stateMachine.firstLocalChannel
        )
        handler.connection = connection
        if let remote = channel.remoteAddress {
            handler.logger[metadataKey: "remote"] = "\(remote)"
        }
        try channel.pipeline.syncOperations.addHandler(handler)
        return connection
    }

    // MARK: - Channel events

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive {
            start()
        }
    }

    /// The channel has closed and its pipeline let go of this handler: drop what the handler holds, the
    /// context first. The context holds the handler and the handler its context; NIO breaks neither
    /// reference, so without this every closed connection's handler, pipeline and decoder (with its
    /// spare buffers) stayed in memory for good.
    package func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
        pendingTLS = nil
        peerCertificate = nil
        verified = nil
        reader = FrameReader(limit: frameLengthLimit)
    }

    package func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !readerStopped else { return }
        reader.append(unwrapInboundIn(data))
        guard !decoding else { return }
        decoding = true
        while !readerStopped {
            let frame: Frame?
            do {
                frame = try reader.next(allocator: context.channel.allocator)
            } catch {
                readerStopped = true
                run(stateMachine.errorCaught(error))
                break
            }
            guard let frame else { break }
            run(stateMachine.frameReceived(frame))
            if case .hello(let hello) = frame {
                logIfPlain(after: hello)
            }
        }
        decoding = false
        if let tls = pendingTLS.take() {
            installTLS(tls, context: context)
        }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is NIOSSLError || error is BoringSSLError else {
            run(stateMachine.errorCaught(error))
            return
        }
        let action = stateMachine.tlsErrorCaught(error)
        if case .close(let reason, _) = action, reason == .securityFailed {
            warnings.warn("closing connection: \(reason)", to: logger)
        }
        run(action)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted = tlsEvent {
            tlsHandshakeCompleted()
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        // Nothing more is decoded, not even the rest of a read being decoded now (when the close
        // comes from a frame of it); a frame cut by the end of the stream is reported.
        if !readerStopped {
            readerStopped = true
            do {
                if !decoding { try reader.finish() }
            } catch {
                run(stateMachine.errorCaught(error))
            }
        }
        run(stateMachine.channelInactive())
        context.fireChannelInactive()
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            drainOutbound()
        }
        context.fireChannelWritabilityChanged()
    }

    package func read(context: ChannelHandlerContext) {
        if stateMachine.isReadingPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    // MARK: - Requests from the Connection, on the event loop

    /// Writes queued frames while the channel is writable, with one flush: messages and control
    /// frames first, then channel frames up to one batch (see ``bulkBatchLimit``).
    ///
    /// A drain that wrote channel frames waits for its last write: until then no channel frame is
    /// taken, so a message queued meanwhile waits behind at most one batch. Encrypted, every drain
    /// waits so, and nothing at all is taken meanwhile: TLS encrypts a flush into one buffer, which it
    /// clears for the next flush; while the socket still held it, clearing copied it on write into
    /// fresh memory the size of the flush, page faults included.
    func drainOutbound() {
        guard let context, let connection else { return }
        let encrypted = stateMachine.isEncrypted
        guard !(encrypted && writeInFlight) else { return }
        var bulkLength = 0
        // Held back one step, so that the drain's last write can carry the promise.
        var last: ByteBuffer?
        taking: while context.channel.isWritable,
            let work = connection.takeNext(bulkAllowed: !writeInFlight && bulkLength < bulkBatchLimit)
        {
            switch work {
            case .urgent(let batch):
                for frame in batch {
                    if let last { context.write(wrapOutboundOut(last), promise: nil) }
                    last = frame
                }
                // Encrypted, the queue is not asked again: it would mark itself idle, and every send
                // until this batch is written would then schedule a drain that cannot take anything.
                if encrypted { break taking }
            case .bulk(let frame):
                if let last { context.write(wrapOutboundOut(last), promise: nil) }
                last = frame
                bulkLength += frame.readableBytes
            }
        }
        guard let last else { return }
        if bulkLength > 0 || encrypted {
            writeInFlight = true
            let written = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(last), promise: written)
            written.futureResult.assumeIsolated().whenComplete { [self, bulkLength] _ in
                writeInFlight = false
                if bulkLength > 0 {
                    bulkBatchLimit =
                        flushing ? min(2 * bulkBatchLimit, Self.largestBulkBatchLength) : Self.bulkBatchLength
                }
                drainOutbound()
            }
        } else {
            context.write(wrapOutboundOut(last), promise: nil)
        }
        let outer = flushing
        flushing = true
        context.flush()
        flushing = outer
    }

    func grantCredit(_ increment: Int, on channel: UInt32) {
        run(stateMachine.grantCredit(increment, on: channel))
    }

    func resetInboundChannel(_ channel: UInt32, _ code: ChannelResetCode) {
        run(stateMachine.resetInboundChannel(channel, code))
    }

    func accept(
        handler eventHandler: any ConnectionEventHandler,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) throws {
        guard let action = stateMachine.accept(keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
        else {
            // Closed meanwhile (a protocol violation, the peer's GOODBYE, ...): say why, not "timed out".
            throw ConnectionClosedError(
                reason: stateMachine.closeReason
                    ?? .timedOut.with(detail: "the invitation is no longer pending"),
                peer: stateMachine.peer
            )
        }
        self.eventHandler = eventHandler
        self.maximumMessageLength = maximumMessageLength
        run(action)
    }

    func acceptResume(
        handler eventHandler: any ConnectionEventHandler,
        nextExpected: UInt64,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        maximumMessageLength: Int
    ) throws {
        guard
            let action = stateMachine.acceptResume(
                nextExpected: nextExpected,
                keepaliveInterval: keepaliveInterval,
                livenessTimeout: livenessTimeout
            )
        else {
            throw ConnectionClosedError(
                reason: stateMachine.closeReason
                    ?? .timedOut.with(detail: "the resume is no longer pending"),
                peer: stateMachine.peer
            )
        }
        self.eventHandler = eventHandler
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

    // MARK: - Actions

    private func start() {
        run(stateMachine.channelActive())
    }

    private func run(_ action: ConnectionStateMachine.Action) {
        guard let context, let connection else { return }
        switch action {
        case .none:
            break

        case .deliverData(let payload, let peer):
            guard let eventHandler else { return }
            if eventHandler.connection(connection, handle: .message(payload, from: peer)) == .pause {
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
            case .opened(let open): report(.channel(.opened(open), from: peer), on: connection)
            case .received(let channel, var bytes):
                if stateMachine.isEncrypted {
                    // Out of TLS's plaintext buffer: a chunk a reader holds would make TLS copy that
                    // whole buffer, into fresh memory, on its next read.
                    bytes = context.channel.allocator.buffer(buffer: bytes)
                }
                report(.channel(.received(channel: channel, bytes), from: peer), on: connection)
            case .ended(let channel, let digest):
                report(.channel(.ended(channel: channel, digest: digest), from: peer), on: connection)
            case .reset(let channel, let code):
                report(.channel(.reset(channel: channel, code), from: peer), on: connection)
            case .credited(let channel, let increment): connection.credited(increment, on: channel)
            case .done(let channel): connection.confirmDone(channel)
            case .none, .refuse, .violation: break  // handled by the state machine
            }

        case .resetByPeer(let channel, let code):
            connection.resetByPeer(channel, code)

        case .send(let frames):
            for frame in frames {
                context.write(
                    wrapOutboundOut(FrameEncoder.buffer(for: frame, allocator: context.channel.allocator)),
                    promise: nil
                )
            }
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
            logger.debug("connected")
            // The owner learns first, then ACCEPT goes out: when the inviter sees ACCEPT, this side
            // already counts the peer as connected. (Frames the owner queues now are drained after.)
            report(.established(peer), on: connection)
            establishedPromise.succeed(peer)
            if finishingHandshake { handshakeFinishedPromise.succeed() }
            if let frame { write(frame, context: context) }

        case .establishResumed(let peer, let peerExpects, let frame, let finishingHandshake):
            establish(context: context)
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
            connection.refuseNewSends(ConnectionClosedError(reason: reason, peer: stateMachine.peer))
            if Self.reasonsWorthAWarning.contains(reason) {
                warnings.warn("closing connection: \(reason)", to: logger)
            } else {
                logger.debug("closing connection: \(reason)")
            }
            // Data queued before the close goes out first, then the GOODBYE or DECLINE.
            while let work = connection.takeNext(bulkAllowed: true) {
                switch work {
                case .urgent(let batch):
                    for buffer in batch { context.write(wrapOutboundOut(buffer), promise: nil) }
                case .bulk(let buffer):
                    context.write(wrapOutboundOut(buffer), promise: nil)
                }
            }
            guard let frame else {
                context.close(promise: nil)
                return
            }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(
                wrapOutboundOut(FrameEncoder.buffer(for: frame, allocator: context.channel.allocator)),
                promise: written
            )
            let grace = context.eventLoop.assumeIsolated().scheduleTask(in: Self.goodbyeGracePeriod) {
                context.close(promise: nil)
            }
            written.futureResult.assumeIsolated().whenComplete { _ in
                grace.cancel()
                context.close(promise: nil)
            }

        case .reportClosed(let peer, let reason, let finishingHandshake, let neverEstablished):
            cancelTimers()
            let error = ConnectionClosedError(reason: reason, peer: peer)
            connection.markClosed(error)
            logger.debug("connection closed: \(reason)")
            report(.closed(peer: peer, reason: reason), on: connection)
            if neverEstablished { establishedPromise.fail(error) }
            if finishingHandshake { handshakeFinishedPromise.succeed() }
            closedPromise.succeed()
            // Break the cycle connection -> channel -> pipeline -> handler -> connection.
            self.eventHandler = nil
            self.connection = nil
        }
    }

    /// Hands `event` to the event handler; an answer can only matter for a message (see ``run(_:)``).
    private func report(_ event: ConnectionEvent, on connection: Connection) {
        _ = eventHandler?.connection(connection, handle: event)
    }

    /// The handshake is done: stop its deadline, widen the frame limit, start keepalives.
    private func establish(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        frameLengthLimit.value = WireProtocol.maximumFrameLength(forMessageLength: maximumMessageLength)
        scheduleKeepalive(context: context)
    }

    /// Writes and flushes one frame at once, ahead of the connection's queues.
    private func write(_ frame: Frame, context: ChannelHandlerContext) {
        context.writeAndFlush(
            wrapOutboundOut(FrameEncoder.buffer(for: frame, allocator: context.channel.allocator)),
            promise: nil
        )
    }

    // MARK: - TLS

    /// Says so in the log when the HELLOs agreed on a plain connection: a warning when this side would
    /// have encrypted (`.optional` against a peer whose HELLO says none, which anyone on the path can
    /// write), a notice when this side's preference is none.
    private func logIfPlain(after hello: Frame.Hello) {
        guard !stateMachine.isEncrypted, stateMachine.peer != nil, !stateMachine.isClosing else { return }
        if security == nil {
            logger.debug("connection not encrypted: this side's encryption preference is none")
        } else {
            warnings.warn(
                """
                connection NOT encrypted: the peer's HELLO says encryption \(hello.encryption) and this side's \
                preference is optional; anyone on the path can read and change it (use .required)
                """,
                to: logger
            )
        }
    }

    /// Switches the stream to TLS after the HELLOs: stops decoding, then (once the read being decoded
    /// is done) puts the TLS handler in front (see ``installTLS(_:context:)``).
    private func startTLS(asClient: Bool, context: ChannelHandlerContext) {
        guard let security else {
            run(
                stateMachine.securityFailed(
                    .securityFailed.with(detail: "no identity to encrypt with"),
                    tellingPeer: false
                )
            )
            return
        }
        readerStopped = true
        let verification: NIOSSLCustomVerificationCallback = { [self] certificates, promise in
            // No PKI: the peer proved it holds the key of its leaf certificate in the handshake; the
            // binding rule and the certificate decision run once the handshake is done.
            peerCertificate = try? certificates.first?.toDERBytes()
            promise.succeed(peerCertificate == nil ? .failed : .certificateVerified)
        }
        let tls: NIOSSLHandler
        do {
            if asClient {
                tls = try NIOSSLClientHandler(
                    context: security.clientContext,
                    serverHostname: nil,
                    customVerificationCallback: verification
                )
            } else {
                tls = NIOSSLServerHandler(context: security.serverContext, customVerificationCallback: verification)
            }
        } catch {
            run(stateMachine.securityFailed(.securityFailed.with(detail: "\(error)"), tellingPeer: false))
            return
        }
        if decoding {
            pendingTLS = tls
        } else {
            installTLS(tls, context: context)
        }
    }

    /// Puts the TLS handler first in the pipeline, with a new decoder here behind it, and feeds it the
    /// bytes read past the HELLO (the start of the peer's TLS handshake).
    private func installTLS(_ tls: NIOSSLHandler, context: ChannelHandlerContext) {
        let leftover = reader.takeUndecoded()
        reader = FrameReader(limit: frameLengthLimit)
        let observer = ServerHelloObserver(isClient: tls is NIOSSLClientHandler) { [self] suite in
            cipherSuite = suite.map(TLSServerHello.name(ofCipherSuite:))
        }
        do {
            try context.pipeline.syncOperations.addHandler(tls, position: .first)
            try context.pipeline.syncOperations.addHandler(observer, position: .first)
        } catch {
            run(stateMachine.securityFailed(.securityFailed.with(detail: "\(error)"), tellingPeer: false))
            return
        }
        readerStopped = false
        if let leftover {
            context.pipeline.syncOperations.fireChannelRead(NIOAny(leftover))
        }
    }

    /// The TLS handshake is done: apply the binding rule to the peer's certificate, then start the
    /// pairing exchange.
    private func tlsHandshakeCompleted() {
        guard let security, let connection, let peer = stateMachine.peer else { return }
        guard let certificate = peerCertificate else {
            run(
                stateMachine.securityFailed(
                    .securityFailed.with(detail: "the peer sent no certificate"),
                    tellingPeer: true
                )
            )
            return
        }
        switch security.verify(certificate, peer) {
        case .refused(let reason):
            warnings.warn("closing connection: \(reason)", to: logger)
            run(stateMachine.securityFailed(reason, tellingPeer: true))
        case .proved(var proved):
            proved.info = proved.info.with(tlsVersion: negotiatedTLSVersion(), cipherSuite: cipherSuite)
            verified = proved
            connection.securityInfo = proved.info
            var nonce = [UInt8](repeating: 0, count: PairingExchange.nonceLength)
            var generator = SystemRandomNumberGenerator()
            for index in nonce.indices { nonce[index] = generator.next() }
            let pairing = PairingExchange(
                isInviter: stateMachine.isInviter,
                localKey: security.localPublicKey,
                peerKey: proved.publicKey,
                localNonce: nonce,
                hash: security.hash
            )
            run(stateMachine.secured(pairing))
        }
    }

    /// The TLS version NIOSSL negotiated, by name.
    private func negotiatedTLSVersion() -> String? {
        guard let context, let version = try? context.pipeline.syncOperations.nioSSL_tlsVersion() else { return nil }
        switch version {
        case .tlsv1: return "TLS 1.0"
        case .tlsv11: return "TLS 1.1"
        case .tlsv12: return "TLS 1.2"
        case .tlsv13: return "TLS 1.3"
        }
    }

    /// The pairing code is known: record it and ask the certificate decision.
    private func decideCertificate(
        peer: PeerID,
        pairingCode: String,
        connection: Connection
    ) {
        let info = (verified?.info ?? connection.securityInfo).with(pairingCode: pairingCode)
        connection.securityInfo = info
        guard let decide = security?.decide else {
            run(stateMachine.certificateDecided(nil))
            return
        }
        guard let eventLoop = context?.eventLoop else { return }
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        Task {
            let verdict = await decide(peer, info)
            eventLoop.execute {
                let handler = loopBound.value
                handler.run(handler.stateMachine.certificateDecided(verdict))
            }
        }
    }

    private func scheduleDeadline(after timeout: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            deadline = nil
            run(stateMachine.deadlinePassed())
        }
    }

    private func scheduleKeepalive(context: ChannelHandlerContext) {
        keepalive = context.eventLoop.assumeIsolated().scheduleTask(in: stateMachine.keepaliveInterval) { [self] in
            keepalive = nil
            let action = stateMachine.keepaliveTick()
            run(action)
            if case .send = action {
                scheduleKeepalive(context: context)
            }
        }
    }

    private func cancelTimers() {
        deadline?.cancel()
        deadline = nil
        keepalive?.cancel()
        keepalive = nil
    }
}
