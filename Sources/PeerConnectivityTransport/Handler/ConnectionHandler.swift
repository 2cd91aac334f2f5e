import Foundation
import Logging
import NIOCore
import NIOSSL
import NIOTLS
import PeerConnectivityCore

/// Runs a ``ConnectionStateMachine`` on a channel: feeds it frames, timers and local decisions,
/// and carries out the actions it returns in one place, ``run(_:)``.
///
/// Inbound it decodes the bytes read itself, through a ``ReceiveBuffer`` (no decoding handler in
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

    /// How long a connection that said GOODBYE lingers, half closed, for the peer to close too
    /// (``ConnectionStateMachine/lingers(after:encrypted:)``): a peer that has read the GOODBYE closes at
    /// once, so this only bounds what a broken one holds.
    static let lingerPeriod = TimeAmount.seconds(5)

    let establishedPromise: EventLoopPromise<PeerID>
    /// Succeeds when the peer has done its part of the handshake (an invitee received INVITE), or the
    /// connection is established or closed: whichever comes first.
    let handshakeFinishedPromise: EventLoopPromise<Void>
    let closedPromise: EventLoopPromise<Void>

    // The properties marked `@exclusivity(unchecked)` are the ones every message reads or writes. Like all of
    // this handler's state they are used only on its channel's event loop, and no access to one of them stays
    // open across a call that could come back into the handler (the writers a drain resumes while it holds
    // `urgentBatch` run later, from the event loop's queue). The runtime's check of each access could never
    // fire, and cost about 80 instructions a check, some 40 checks a 64-byte round trip over both ends
    // (`Scripts/count-instructions.sh`). A new property stays checked unless it is as hot and as confined.

    /// The connection's protocol state: it decides, the handler carries out its actions.
    @exclusivity(unchecked) var stateMachine: ConnectionStateMachine
    @exclusivity(unchecked) var delegate: (any ConnectionDelegate)?
    @exclusivity(unchecked) var connection: Connection?
    @exclusivity(unchecked) var context: ChannelHandlerContext?
    var maximumMessageLength: Int
    var logger: Logger
    /// Counters and timers of this connection (swift-metrics).
    let metrics: ConnectionMetrics
    /// The warnings about peers this handler's listener or session may still write.
    let warnings: WarningBudget
    /// Shared with the frame decoder: small while handshaking, the message limit once connected.
    let frameLengthLimit: FrameLengthLimit
    /// The bytes read and not decoded yet, and their decoder (a new one on the switch to TLS).
    @exclusivity(unchecked) var reader: ReceiveBuffer
    /// ``channelRead(context:data:)`` is decoding: a switch to TLS waits until it is done.
    @exclusivity(unchecked) var decoding = false
    /// Something was queued while this read's frames were handled (``Connection/scheduleDrain(batching:)``):
    /// drain once they all are.
    @exclusivity(unchecked) var drainAfterRead = false
    /// Nothing more is decoded: after a malformed frame, or from the HELLO that switches to TLS
    /// until the TLS handler is in place.
    @exclusivity(unchecked) var readerStopped = false
    /// The TLS handler to put in front once the frames already read are decoded.
    @exclusivity(unchecked) var pendingTLS: NIOSSLHandler?
    let security: ConnectionSecurity?
    /// The peer's certificate (DER), from the TLS verification callback.
    var peerCertificate: [UInt8]?
    /// What the peer's certificate proved, until the pairing code completes it.
    var verified: ConnectionSecurity.Verified?
    /// The cipher suite read from the server's first TLS record (see ``ServerHelloObserver``).
    var cipherSuite: String?

    var deadline: Scheduled<Void>?
    var keepalive: Scheduled<Void>?
    /// The receive buffers the socket pools now (``sizeReceivePool()``).
    var receivePool = ConnectionConfiguration.receivePool
    /// How long the pool stays grown after the peer's last block channel ends.
    let receivePoolLinger: TimeAmount
    /// Shrinks the pool once ``receivePoolLinger`` has passed with no block channel open.
    var receivePoolShrink: Scheduled<Void>?
    /// A read the channel asked for while the state machine had reading paused.
    @exclusivity(unchecked) var readPending = false
    /// Set once the GOODBYE is written and the output shut down: everything read is dropped, and reading
    /// goes on whatever paused it, until the peer's end of stream.
    @exclusivity(unchecked) var lingering = false
    /// Closes a lingering connection whose peer never closes.
    var lingerLimit: Scheduled<Void>?
    /// The last write of a drain that must be written before the next (see ``drainOutgoing()``) is on
    /// its way to the socket.
    @exclusivity(unchecked) var writeInFlight = false
    /// Bytes of channel frames per batch: doubled, up to ``largestBulkBatchLength``, each time the
    /// socket takes a batch within the flush that wrote it (a fast link: fewer, larger writes); back to
    /// ``bulkBatchLength`` when a batch has to wait for the socket, so that on a slow link a message
    /// queued meanwhile waits behind one small batch.
    @exclusivity(unchecked) var bulkBatchLimit = ConnectionHandler.bulkBatchLength
    /// ``drainOutgoing()`` is flushing: a batch written now was taken by the socket at once.
    @exclusivity(unchecked) var flushing = false
    /// The messages and control frames a drain takes from the connection's queue, and, once written and
    /// emptied, the queue's storage for the next ones: the two trade places, so a message queued and
    /// written costs no allocation of a batch.
    @exclusivity(unchecked) var urgentBatch = CircularBuffer<ByteBuffer>()
    /// Replies given to this read by ``Connection/enqueue(_:)`` while nothing waited in the connection's
    /// queue: written once the read's frames are handled, before anything queued since.
    @exclusivity(unchecked) var readReplies: [ByteBuffer] = []
    /// The storage of the last message a responder let go of (``Connection/keepMessageStorage(_:)``).
    @exclusivity(unchecked) var messageStorage = Data()
    /// The room, in frames, an emptied ``urgentBatch`` keeps; a larger one (after a burst) is let go.
    static let keptBatchCapacity = 1024
    /// Holds channel frames back while the kernel holds the connection's low watermark unsent; nil when the
    /// connection has none (see ``Connection/limitUnsentBytes(to:)``).
    @exclusivity(unchecked) var unsentGate: UnsentBytesGate?
    /// The next look at the kernel's unsent bytes, while ``unsentGate`` holds channel frames back.
    var unsentRecheck: Scheduled<Void>?
    /// The budget of channel-frame bytes this handler's event loop writes between two polls, shared with the
    /// loop's other connections; taken when the handler is added, on its loop.
    @exclusivity(unchecked) var writeTurn: LoopWriteTurn?
    /// This handler's drain waits for ``writeTurn``'s next turn.
    @exclusivity(unchecked) var waitsForTurn = false
    /// Reads the kernel's figures of the channel's socket for ``unsentGate``; a test gives its own.
    var readKernelFigures: (any Channel) -> TCPLinkInfo? = { TCPLinkInfo.readOnEventLoop(from: $0) }

    init(
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        configuration: ConnectionConfiguration,
        delegate: any ConnectionDelegate,
        eventLoop: any EventLoop
    ) {
        self.stateMachine = ConnectionStateMachine(
            localPeer: localPeer,
            role: role,
            keepaliveInterval: configuration.keepaliveInterval,
            livenessTimeout: configuration.livenessTimeout,
            handshakeTimeout: configuration.handshakeTimeout,
            certificateDecisionTimeout: configuration.security.flatMap { $0.decide == nil ? nil : $0.decisionTimeout },
            maximumIncomingChannels: configuration.maximumIncomingChannels,
            maximumInvitationTimeout: configuration.maximumInvitationTimeout,
            encryption: configuration.security?.preference ?? .none,
            encryptedBefore: configuration.encryptedBefore
        )
        self.security = configuration.security
        self.maximumMessageLength = configuration.maximumMessageLength
        self.receivePoolLinger = configuration.receivePoolLinger
        self.delegate = delegate
        self.logger = configuration.logger
        self.metrics = ConnectionMetrics(role: role)
        self.warnings = configuration.warnings
        let frameLengthLimit = FrameLengthLimit(FrameLengthLimit.handshake)
        self.frameLengthLimit = frameLengthLimit
        self.reader = ReceiveBuffer(limit: frameLengthLimit)
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
    ///   - delegate: receives the connection's events.
    /// - Returns: the connection's handle.
    /// - Throws: if the pipeline cannot be set up.
    static func install(
        on channel: any Channel,
        localPeer: PeerID,
        role: ConnectionStateMachine.Role,
        configuration: ConnectionConfiguration,
        delegate: any ConnectionDelegate
    ) throws -> Connection {
        let handler = ConnectionHandler(
            localPeer: localPeer,
            role: role,
            configuration: configuration,
            delegate: delegate,
            eventLoop: channel.eventLoop
        )
        var channelQueueLimit = configuration.channelQueueLimit
        if let lowWatermark = configuration.notSentLowWatermark.map({ max(Connection.minimumUnsentBytes, $0) }) {
            try handler.limitUnsentBytes(of: channel, to: lowWatermark, gated: configuration.gatesUnsentBytes)
            channelQueueLimit = min(channelQueueLimit, lowWatermark)
        }
        let connection = Connection(
            channel: channel,
            handler: handler,
            highWatermark: configuration.outboundHighWatermark,
            channelQueueLimit: channelQueueLimit,
            firstChannel: handler.stateMachine.firstLocalChannel
        )
        handler.connection = connection
        handler.logger[metadataKey: "connection"] = "\(ConnectionSerial.next())"
        if let remote = channel.remoteAddress {
            handler.logger[metadataKey: "remote"] = "\(Platform.hostPort(remote))"
        }
        if let congestionControl = configuration.congestionControl {
            TCPCongestionControl.set(congestionControl, on: channel, logger: handler.logger)
        }
        try channel.pipeline.syncOperations.addHandler(handler)
        return connection
    }

    // MARK: - Channel events

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        writeTurn = LoopWriteTurn.current(on: context.eventLoop)
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
        readReplies = []
        messageStorage = Data()
        peerCertificate = nil
        verified = nil
        reader = ReceiveBuffer(limit: frameLengthLimit)
    }

    package func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Reads come from a poll: the loop's connections have a fresh turn to write in.
        writeTurn?.polled()
        guard !readerStopped else { return }
        let bytes = unwrapInboundIn(data)
        metrics.received(bytes: bytes.readableBytes)
        if stateMachine.isEncrypted {
            // TLS's plaintext buffer, which TLS writes into again on its next read: a frame or chunk still
            // held then would make it copy that whole buffer, all its capacity, into fresh memory.
            reader.append(copying: bytes)
        } else {
            reader.append(bytes)
        }
        guard !decoding else { return }
        decoding = true
        // Asked once a read: through the channel's existential and its cache, about 300 instructions an ask.
        let allocator = context.channel.allocator
        while !readerStopped {
            let frame: Frame?
            do {
                frame = try reader.next(allocator: allocator)
            } catch {
                readerStopped = true
                run(stateMachine.errorCaught(error))
                break
            }
            guard let frame else { break }
            metrics.frameReceived()
            run(stateMachine.frameReceived(frame))
            if case .hello(let hello) = frame {
                logIfPlain(after: hello)
            }
        }
        decoding = false
        if let tls = pendingTLS.take() {
            installTLS(tls, context: context)
        }
        // After TLS is in place: what was queued goes through it, as a drain the event loop ran would.
        if drainAfterRead {
            drainAfterRead = false
            drainOutgoing()
        } else if !readReplies.isEmpty {
            drainOutgoing(takingQueued: false)
        }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        metrics.flushReceived()
        context.fireChannelReadComplete()
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
            drainOutgoing()
        }
        context.fireChannelWritabilityChanged()
    }

    package func read(context: ChannelHandlerContext) {
        if stateMachine.isReadingPaused, !lingering {
            readPending = true
        } else {
            context.read()
        }
    }
}
