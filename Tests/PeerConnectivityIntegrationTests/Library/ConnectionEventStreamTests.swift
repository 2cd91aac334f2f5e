import Logging
import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

/// A connection's events, in order, as an async sequence: two real connections over loopback, each side
/// read through a `ConnectionEventStream`.
@Suite("Connection events")
struct ConnectionEventStreamTests {
    private static func configuration() -> ConnectionConfiguration {
        ConnectionConfiguration(
            maximumMessageLength: 1 << 20,
            handshakeTimeout: .seconds(30),
            keepaliveInterval: .seconds(30),
            livenessTimeout: .seconds(90),
            logger: Logger(label: "connection-events-test")
        )
    }

    /// A listener on 127.0.0.1, its events read through a stream that outlives each connection.
    private static func listen(
        as invitee: PeerID,
        receivePoolLinger: TimeAmount = ConnectionConfiguration.defaultReceivePoolLinger
    ) async throws -> (ConnectionListener, ConnectionEventStream) {
        let events = ConnectionEventStream(finishesOnClose: false)
        var configuration = configuration()
        configuration.receivePoolLinger = receivePoolLinger
        let listener = try await ConnectionListener.bind(
            host: "127.0.0.1",
            port: 0,
            localPeer: invitee,
            configuration: configuration,
            handshakeLimits: .init(maximum: 8, maximumPerAddress: 8),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: events
        )
        return (listener, events)
    }

    @Test("invitation, establishment, a message and the close arrive in order, the close last")
    func eventsInOrder() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let inviter = try PeerID(displayName: "inviter")
        let invitee = try PeerID(displayName: "invitee")
        let (listener, listenerEvents) = try await Self.listen(as: invitee)
        defer {
            listenerEvents.finish()
            Task { await listener.close() }
        }

        let dialerEvents = ConnectionEventStream()
        let outgoing = try await ConnectionDialer.dial(
            DialTarget(host: "127.0.0.1", port: listener.port),
            localPeer: inviter,
            invitation: .init(expectedPeer: invitee, context: ByteBuffer(string: "hello"), timeout: .seconds(30)),
            configuration: Self.configuration(),
            group: group,
            delegate: dialerEvents
        )

        // The invitee side: the invitation comes first, with its context; accept it into a new stream.
        var inbound = listenerEvents.makeAsyncIterator()
        guard let first = await inbound.next(), case .invitation(let from, let context, _) = first.event else {
            Issue.record("the first event on the invitee side is not the invitation")
            return
        }
        #expect(from == inviter)
        #expect(String(buffer: context) == "hello")
        let sessionEvents = ConnectionEventStream()
        try await first.connection.accept(
            delegate: sessionEvents,
            keepaliveInterval: .seconds(30),
            livenessTimeout: .seconds(90),
            maximumMessageLength: 1 << 20
        )
        #expect(try await outgoing.established.get() == invitee)

        var inviterSide = dialerEvents.makeAsyncIterator()
        var accepted = sessionEvents.makeAsyncIterator()
        guard case .identified(let who) = await inviterSide.next()?.event else {
            Issue.record("the inviter did not learn who answered first")
            return
        }
        #expect(who == invitee)
        guard case .established(let peer) = await inviterSide.next()?.event else {
            Issue.record("the inviter's second event is not the establishment")
            return
        }
        #expect(peer == invitee)
        guard case .established(let peerSeen) = await accepted.next()?.event else {
            Issue.record("the accepting side's first event is not the establishment")
            return
        }
        #expect(peerSeen == inviter)

        let bytes: [UInt8] = Array("ping".utf8)
        try await outgoing.send(bytes.withUnsafeBytes { FrameEncoder.dataFrame($0) })
        guard case .message(let message, let sender) = await accepted.next()?.event else {
            Issue.record("the message did not arrive as the next event")
            return
        }
        #expect(String(buffer: message) == "ping" && sender == inviter)

        outgoing.close(.localDisconnect)
        guard case .closed(let closedPeer, let reason) = await accepted.next()?.event else {
            Issue.record("the close did not arrive")
            return
        }
        #expect(closedPeer == inviter)
        #expect(reason == .peerDisconnected, "the closing side's GOODBYE arrived: \(reason)")
        #expect(await accepted.next() == nil, "nothing comes after the close")
    }

    @Test("a connection dialed with a low watermark has it as TCP_NOTSENT_LOWAT, and NIO holds no more for it")
    func notSentLowWatermark() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let invitee = try PeerID(displayName: "invitee")
        let (listener, listenerEvents) = try await Self.listen(as: invitee)
        defer {
            listenerEvents.finish()
            Task { await listener.close() }
        }
        for lowWatermark in [nil, 128 << 10] as [Int?] {
            var configuration = Self.configuration()
            configuration.notSentLowWatermark = lowWatermark
            let outgoing = try await ConnectionDialer.dial(
                DialTarget(host: "127.0.0.1", port: listener.port),
                localPeer: try PeerID(displayName: "inviter"),
                invitation: .init(expectedPeer: invitee, context: ByteBuffer(), timeout: .seconds(30)),
                configuration: configuration,
                group: group,
                delegate: ConnectionEventStream()
            )
            let option = try await outgoing.channel.getOption(Connection.notSentLowWatermarkOption).get()
            let marks = try await outgoing.channel.getOption(.writeBufferWaterMark).get()
            if let lowWatermark {
                #expect(option == lowWatermark && marks.high == lowWatermark)
            } else {
                // Unset on the socket (0): the system's net.ipv4.tcp_notsent_lowat holds.
                #expect(option == 0 && marks.high == 4 << 20, "\(option)")
            }
            outgoing.abort()
        }
    }

    @Test("the receive pool holds a window of reads while the peer sends a resource or folder, and shrinks after")
    func receivePoolFollowsBlockChannels() async throws {
        let inviter = try PeerID(displayName: "inviter")
        let invitee = try PeerID(displayName: "invitee")
        // No linger: the pool shrinks as soon as no block channel is open (the linger's timer: ConnectionHandlerTests).
        let (listener, listenerEvents) = try await Self.listen(as: invitee, receivePoolLinger: .zero)
        defer {
            listenerEvents.finish()
            Task { await listener.close() }
        }
        let outgoing = try await ConnectionDialer.dial(
            DialTarget(host: "127.0.0.1", port: listener.port),
            localPeer: inviter,
            invitation: .init(expectedPeer: invitee, context: ByteBuffer(), timeout: .seconds(30)),
            configuration: Self.configuration(),
            group: MultiThreadedEventLoopGroup.singleton,
            delegate: ConnectionEventStream()
        )
        defer { outgoing.abort() }
        var inbound = listenerEvents.makeAsyncIterator()
        guard let first = await inbound.next(), case .invitation = first.event else {
            Issue.record("the first event on the invitee side is not the invitation")
            return
        }
        let receiver = first.connection
        let events = ConnectionEventStream()
        try await receiver.accept(
            delegate: events,
            keepaliveInterval: .seconds(30),
            livenessTimeout: .seconds(90),
            maximumMessageLength: 1 << 20
        )
        _ = try await outgoing.established.get()
        var received = events.makeAsyncIterator()
        guard case .established = await received.next()?.event else {
            Issue.record("the receiving side was not established")
            return
        }
        func pool() async throws -> UInt { try await receiver.channel.getOption(.maxMessagesPerRead).get() }
        /// The next event on the receiving side is an OPEN (or, if not, a RESET) of `channel`; the option
        /// is set before the event is reported.
        func expectNext(opened: Bool, _ channel: UInt32) async throws {
            let event = await received.next()?.event
            switch event {
            case .channel(.opened(let open), _) where opened: try #require(open.channel == channel)
            case .channel(.reset(let reset, _), _) where !opened: try #require(reset == channel)
            default: try #require(Bool(false), "unexpected event: \(String(describing: event))")
            }
        }
        /// Opens a channel of `kind` from the dialling side, waits for its OPEN on the receiving side, and
        /// returns its number with the receiving socket's pool then.
        func open(_ kind: ChannelKind) async throws -> (channel: UInt32, pool: UInt) {
            let size: UInt64 = kind == .stream ? 0 : 4 << 20
            let channel = try outgoing.openChannel(kind: kind, size: size, name: Array("\(kind)".utf8))
            try await expectNext(opened: true, channel)
            return (channel, try await pool())
        }
        let small = UInt(ConnectionConfiguration.receivePool)
        let large = UInt(ConnectionConfiguration.blockReceivePool)
        #expect(try await pool() == small)

        // A stream is taken as it arrives: the pool stays as it is.
        let stream = try await open(.stream)
        #expect(stream.pool == small)

        // A resource: the pool grows, and shrinks again when the sender resets it.
        let resource = try await open(.resource)
        #expect(resource.pool == large)
        outgoing.resetChannel(resource.channel, .cancelled)
        try await expectNext(opened: false, resource.channel)
        #expect(try await pool() == small)

        // A folder: it grows, and shrinks again when this side resets it.
        let folder = try await open(.folder)
        #expect(folder.pool == large)
        receiver.resetIncomingChannel(folder.channel, .cancelled)
        // The reset runs on the event loop, in order before the option is read there.
        #expect(try await pool() == small)
        outgoing.resetChannel(stream.channel, .cancelled)
    }
}
