import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import PeerConnectivityCore
import Testing

@testable import PeerConnectivityTransport

/// The connection handler on an `EmbeddedChannel`: frames in and out as bytes, timers on the embedded
/// loop's clock, no socket.
@Suite("ConnectionHandler")
struct ConnectionHandlerTests {
    private static let alice = try! PeerID(displayName: "alice")
    private static let bob = try! PeerID(displayName: "bob")

    /// A handler with one channel, its connection, and the events it reported.
    private struct Rig {
        let channel: EmbeddedChannel
        let connection: Connection
        let events: RecordingDelegate
        let reads: ReadCounter

        /// Installs a handler for alice in `role` and activates the channel.
        init(
            role: ConnectionStateMachine.Role,
            demand: ConnectionReadDemand = .more,
            delegate: (any ConnectionDelegate)? = nil
        ) throws {
            channel = EmbeddedChannel()
            reads = ReadCounter()
            // In front of the connection handler: it sees the reads the handler lets through.
            try channel.pipeline.syncOperations.addHandler(reads)
            events = RecordingDelegate(demand: demand)
            let configuration = ConnectionConfiguration(
                maximumMessageLength: 1 << 20,
                handshakeTimeout: .seconds(7),
                keepaliveInterval: .seconds(30),
                livenessTimeout: .seconds(90),
                logger: Logger(label: "connection-handler-test")
            )
            connection = try ConnectionHandler.install(
                on: channel,
                localPeer: ConnectionHandlerTests.alice,
                role: role,
                configuration: configuration,
                delegate: delegate ?? events
            )
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        /// Everything the handler wrote, decoded.
        func written() throws -> [Frame] {
            var reader = ReceiveBuffer(limit: FrameLengthLimit(1 << 21))
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                reader.append(buffer)
            }
            var frames: [Frame] = []
            while let frame = try reader.next(allocator: channel.allocator) {
                frames.append(frame)
            }
            return frames
        }

        /// Feeds `frame` to the handler as the bytes the peer sent.
        func receive(_ frame: Frame) throws {
            try channel.writeInbound(FrameEncoder.buffer(for: frame, allocator: channel.allocator))
        }

        /// Takes alice, an inviter, to established with bob.
        func establishAsInviter() throws {
            _ = try written()
            try receive(.hello(Frame.Hello(peer: ConnectionHandlerTests.bob)))
            try receive(.accept(.defaultLimits))
        }
    }

    private static let invitation = ConnectionStateMachine.Invitation(
        expectedPeer: bob,
        context: ByteBuffer(string: "join"),
        timeout: .seconds(5)
    )

    @Test("an inviter writes HELLO and INVITE when the channel becomes active")
    func helloAndInviteOnActivation() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        let frames = try rig.written()
        #expect(frames.count == 2)
        guard frames.count == 2, case .hello(let hello) = frames[0], case .invite(let invite) = frames[1] else {
            Issue.record("expected HELLO then INVITE, got \(frames)")
            return
        }
        #expect(hello.peer == Self.alice)
        #expect(invite.timeoutMilliseconds == 5_000)
        #expect(String(buffer: invite.context) == "join")
        #expect(rig.events.events.isEmpty)
    }

    @Test("an invitee writes only its HELLO and reports the invitation with its timeout")
    func inviteeReportsInvitation() throws {
        let rig = try Rig(role: .invitee)
        #expect(try rig.written() == [.hello(Frame.Hello(peer: Self.alice))])
        try rig.receive(.hello(Frame.Hello(peer: Self.bob)))
        try rig.receive(
            .invite(Frame.Invite(timeoutMilliseconds: 3_000, fields: .defaultLimits, context: ByteBuffer(string: "hi")))
        )
        guard case .invitation(let from, let context, let timeout) = rig.events.events.last else {
            Issue.record("expected the invitation, got \(rig.events.events)")
            return
        }
        #expect(from == Self.bob)
        #expect(String(buffer: context) == "hi")
        #expect(timeout == .seconds(3))
        #expect(outcome(of: rig.connection.handshakeFinished)?.isSuccess == true)
    }

    @Test("a malformed frame closes the channel with a GOODBYE naming protocolViolation")
    func malformedFrameCloses() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        _ = try rig.written()
        // Length 1, type 0xEE: no such frame type.
        var bytes = rig.channel.allocator.buffer(capacity: 5)
        bytes.writeBytes([0, 0, 0, 1, 0xEE])
        _ = try? rig.channel.writeInbound(bytes)
        rig.channel.embeddedEventLoop.run()
        #expect(try rig.written() == [.goodbye(.protocolViolation)])
        #expect(!rig.channel.isActive)
        #expect(rig.events.closedReasons == [.protocolViolation])
    }

    @Test("a DATA frame reaches the event handler as a message from the peer")
    func dataBecomesMessage() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        try rig.receive(.data(ByteBuffer(string: "ping")))
        guard case .message(let payload, let from) = rig.events.events.last else {
            Issue.record("expected a message, got \(rig.events.events)")
            return
        }
        #expect(String(buffer: payload) == "ping")
        #expect(from == Self.bob)
        #expect(rig.events.events.contains { if case .established(Self.bob) = $0 { true } else { false } })
    }

    @Test("a message answered with .pause stops reads until resumeReading")
    func pauseStopsReads() throws {
        let rig = try Rig(role: .inviter(Self.invitation), demand: .pause)
        try rig.establishAsInviter()
        rig.channel.read()
        let before = rig.reads.count
        #expect(before > 0, "a read before any message goes through")

        try rig.receive(.data(ByteBuffer(string: "slow down")))
        rig.channel.read()
        rig.channel.read()
        #expect(rig.reads.count == before, "no read passes while paused")

        rig.connection.resumeReading()
        rig.channel.embeddedEventLoop.run()
        #expect(rig.reads.count == before + 1, "the read held back goes through once, on resume")
        rig.channel.read()
        #expect(rig.reads.count == before + 2)
    }

    @Test("the handshake deadline fires on the event loop's clock")
    func handshakeDeadline() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        _ = try rig.written()
        rig.channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(rig.channel.isActive, "the invitation's 5 s have not passed")
        #expect(try rig.written().isEmpty)

        rig.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try rig.written() == [.goodbye(.timedOut)])
        #expect(!rig.channel.isActive)
        #expect(rig.events.closedReasons == [.timedOut])
        #expect(outcome(of: rig.connection.established)?.isSuccess == false)
    }

    @Test("an invitee's deadline is its handshake timeout")
    func inviteeDeadline() throws {
        let rig = try Rig(role: .invitee)
        _ = try rig.written()
        rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(6_999))
        #expect(rig.channel.isActive)
        rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try rig.written() == [.goodbye(.handshakeTimeout)])
        #expect(rig.events.closedReasons == [.handshakeTimeout])
    }

    @Test("bytes that trickle in do not put the handshake deadline off")
    func trickleDoesNotDelayTheDeadline() throws {
        let rig = try Rig(role: .invitee)
        _ = try rig.written()
        // A HELLO one byte every 500 ms: bytes come in all through the 7 s, the frame never ends.
        let hello = FrameEncoder.buffer(for: .hello(Frame.Hello(peer: Self.bob)), allocator: rig.channel.allocator)
        for byte in hello.readableBytesView.prefix(13) {
            try rig.channel.writeInbound(ByteBuffer(bytes: [byte]))
            rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        }
        #expect(rig.channel.isActive, "6.5 s of 7")
        #expect(try rig.written().isEmpty)
        rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        #expect(try rig.written() == [.goodbye(.handshakeTimeout)])
        #expect(rig.events.closedReasons == [.handshakeTimeout])
    }

    @Test("once established the deadline no longer fires")
    func deadlineCancelledOnEstablish() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        rig.channel.embeddedEventLoop.advanceTime(by: .seconds(6))
        #expect(rig.channel.isActive)
        #expect(rig.events.closedReasons.isEmpty)
        #expect(try outcome(of: rig.connection.established)?.get() == Self.bob)
    }

    @Test(".closed is the last event, exactly once")
    func closedOnceAndLast() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        try rig.receive(.goodbye(.localDisconnect))
        rig.channel.embeddedEventLoop.run()
        #expect(!rig.channel.isActive)
        // Later requests and a second close report nothing more.
        rig.connection.close(.localDisconnect)
        rig.channel.close(promise: nil)
        rig.channel.embeddedEventLoop.run()

        #expect(rig.events.closedReasons.count == 1)
        guard case .closed(let peer, let reason) = rig.events.events.last else {
            Issue.record("the last event is not .closed: \(rig.events.events)")
            return
        }
        #expect(peer == Self.bob)
        #expect(reason == .peerDisconnected)
        #expect(outcome(of: rig.connection.closed)?.isSuccess == true)
    }

    @Test("the receive pool grows when the peer opens a resource, and shrinks once none has been open for the linger")
    func receivePoolLingers() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        let handler = rig.connection.handler.value
        let loop = rig.channel.embeddedEventLoop
        let linger = ConnectionConfiguration.defaultReceivePoolLinger
        let small = ConnectionConfiguration.receivePool
        let large = ConnectionConfiguration.blockReceivePool
        func open(_ channel: UInt32, _ kind: ChannelKind) throws {
            let name = Array("f\(channel)".utf8)
            try rig.receive(.open(Frame.Open(channel: channel, kind: kind, size: 4 << 20, name: name)))
        }
        #expect(handler.receivePool == small)
        try open(2, .resource)
        #expect(handler.receivePool == large)
        try rig.receive(.reset(channel: 2, .cancelled))
        loop.advanceTime(by: linger - .milliseconds(1))
        #expect(handler.receivePool == large, "the pool waits for the next transfer")
        loop.advanceTime(by: .milliseconds(1))
        #expect(handler.receivePool == small, "and shrinks once the linger has passed")

        // A transfer that starts within the linger calls the shrink off: the pool then lingers a whole
        // linger after that transfer ends, not after the one before.
        try open(4, .folder)
        try rig.receive(.reset(channel: 4, .cancelled))
        let half = TimeAmount.nanoseconds(linger.nanoseconds / 2)
        loop.advanceTime(by: half)
        try open(6, .resource)
        #expect(handler.receivePool == large)
        try rig.receive(.reset(channel: 6, .cancelled))
        loop.advanceTime(by: half + .milliseconds(1))
        #expect(handler.receivePool == large, "a linger since the first transfer ended, half of one since the second")
        loop.advanceTime(by: half)
        #expect(handler.receivePool == small)
    }

    @Test("a RESET of a channel this side opened goes to the connection, not to the event handler")
    func resetOfOwnChannel() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        let number = try rig.connection.openChannel(kind: .stream, size: 0, name: Array("s".utf8))
        #expect(number % 2 == 1, "the inviter opens odd channels")
        let count = rig.events.events.count
        try rig.receive(.reset(channel: number, .cancelled))
        #expect(rig.events.events.count == count, "no event for a reset of our own channel")
        #expect(throws: (any Error).self) { try rig.connection.finishChannel(number, digest: nil) }
    }

    @Test("a chunk queued as its header and an uncopied payload reaches the wire whole, between other channels' turns")
    func headerAndPayloadStayTogether() async throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        let first = try rig.connection.openChannel(kind: .stream, size: 0, name: Array("a".utf8))
        let second = try rig.connection.openChannel(kind: .stream, size: 0, name: Array("b".utf8))
        // One buffer the payloads are slices of, as the benchmark tools' pattern is.
        let pattern = ByteBuffer(bytes: (0..<3_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        func header(_ channel: UInt32, _ length: Int) -> ByteBuffer {
            var header = ByteBuffer()
            FrameEncoder.writeChunkHeader(channel: channel, payloadLength: length, into: &header)
            return header
        }
        let pieces: [(UInt32, Int, Int)] = [(first, 0, 1_000), (second, 1_000, 700), (first, 1_700, 1_300)]
        for (channel, offset, length) in pieces {
            let payload = pattern.getSlice(at: offset, length: length)!
            try await rig.connection.sendChunk(header: header(channel, length), payload: payload, on: channel)
        }
        let message = FrameEncoder.buffer(for: .data(ByteBuffer(string: "hi")), allocator: rig.channel.allocator)
        _ = try rig.connection.enqueue(EncodedFrame(head: message))
        rig.channel.embeddedEventLoop.run()
        // Decoded from the bytes written: a header parted from its payload would not decode as these.
        let chunks = try rig.written().compactMap { frame -> (UInt32, ByteBuffer)? in
            if case .chunk(let channel, let bytes) = frame { (channel, bytes) } else { nil }
        }
        #expect(chunks.map(\.0) == pieces.map(\.0))
        for ((_, bytes), (_, offset, length)) in zip(chunks, pieces) {
            #expect(bytes == pattern.getSlice(at: offset, length: length))
        }
    }

    @Test("a drain that takes the only queued message leaves the queue idle: each later message goes out too")
    func drainLeavesQueueIdle() throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        _ = try rig.written()
        for index in 0..<3 {
            let body = ByteBuffer(string: "message \(index)")
            let message = FrameEncoder.buffer(for: .data(body), allocator: rig.channel.allocator)
            _ = try rig.connection.enqueue(EncodedFrame(head: message))
            rig.channel.embeddedEventLoop.run()
            // A queue left marked busy would schedule no drain for the next message.
            #expect(try rig.written() == [.data(body)], "message \(index)")
        }
    }

    @Test(
        "a reply given in the read while nothing is queued goes out at the read's end, before what is queued after it"
    )
    func repliesInTheRead() throws {
        let answers = AnsweringDelegate()
        let rig = try Rig(role: .inviter(Self.invitation), delegate: answers)
        try rig.establishAsInviter()
        _ = try rig.written()
        let handler = rig.connection.handler.value
        func frame(_ text: String) -> EncodedFrame {
            EncodedFrame(
                head: FrameEncoder.buffer(for: .data(ByteBuffer(string: text)), allocator: rig.channel.allocator)
            )
        }
        func queued() -> Int { rig.connection.outbound.withLock { $0.pending.count } }
        var seen: [(readReplies: Int, queued: Int)] = []
        answers.answer = { connection, message in
            _ = try? connection.enqueue(frame("re " + String(buffer: message)))
            if String(buffer: message) == "a" {
                // As the session queues under its lock: into the queue, the drain left to the read.
                connection.wake(after: try! connection.enqueueWithoutWaking(frame("x")))
            }
            seen.append((handler.readReplies.count, queued()))
        }
        // Both messages in one read.
        var bytes = FrameEncoder.buffer(for: .data(ByteBuffer(string: "a")), allocator: rig.channel.allocator)
        var second = FrameEncoder.buffer(for: .data(ByteBuffer(string: "b")), allocator: rig.channel.allocator)
        bytes.writeBuffer(&second)
        try rig.channel.writeInbound(bytes)
        // "re a" went to the read, "x" to the queue, and "re b" after it, since the queue was no longer empty.
        #expect(seen.map(\.readReplies) == [1, 1])
        #expect(seen.map(\.queued) == [1, 2])
        #expect(try rig.written() == ["re a", "x", "re b"].map { .data(ByteBuffer(string: $0)) })
        #expect(handler.readReplies.isEmpty)
        #expect(queued() == 0)
    }

    @Test("while the socket takes no writes, a reply in the read waits in the queue, and goes out once it does")
    func repliesWaitWhileUnwritable() throws {
        let answers = AnsweringDelegate()
        let rig = try Rig(role: .inviter(Self.invitation), delegate: answers)
        try rig.establishAsInviter()
        _ = try rig.written()
        answers.answer = { connection, message in
            let reply = FrameEncoder.buffer(for: .data(message), allocator: rig.channel.allocator)
            _ = try? connection.enqueue(EncodedFrame(head: reply))
        }
        rig.channel.isWritable = false
        try rig.receive(.data(ByteBuffer(string: "ping")))
        #expect(rig.connection.handler.value.readReplies.isEmpty)
        #expect(rig.connection.outbound.withLock { $0.pending.count } == 1)
        #expect(try rig.written() == [])
        rig.channel.isWritable = true
        rig.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try rig.written() == [.data(ByteBuffer(string: "ping"))])
    }

    @Test("with a low watermark, channel frames wait while the kernel holds it unsent; a message does not")
    func unsentGate() async throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        let kernel = KernelFigures()
        let handler = rig.connection.handler.value
        handler.unsentGate = UnsentBytesGate(lowWatermark: 4_096)
        handler.readKernelFigures = { _ in kernel.info }
        kernel.notSent = 8_192
        let number = try rig.connection.openChannel(kind: .stream, size: 0, name: Array("s".utf8))
        let chunk = [UInt8](repeating: 7, count: 1_000).withUnsafeBytes { FrameEncoder.chunkFrame(channel: number, $0) }
        try await rig.connection.sendChunk(chunk, payloadLength: 1_000, on: number)
        let message = FrameEncoder.buffer(for: .data(ByteBuffer(string: "hi")), allocator: rig.channel.allocator)
        _ = try rig.connection.enqueue(EncodedFrame(head: message))
        rig.channel.embeddedEventLoop.run()
        let held = try rig.written()
        #expect(held.contains { if case .data = $0 { true } else { false } }, "the message goes: \(held)")
        #expect(!held.contains { if case .open = $0 { true } else { false } }, "the channel waits: \(held)")
        // 8,192 - 2,048 bytes at 312,500 bytes a second: the gate looks again after 19.66 ms.
        rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(19))
        #expect(try rig.written().isEmpty)
        kernel.notSent = 1_000
        rig.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let released = try rig.written()
        #expect(released.contains { if case .open = $0 { true } else { false } }, "\(released)")
        #expect(released.contains { if case .chunk = $0 { true } else { false } }, "\(released)")
    }

    /// Opens `streams` streams, credits each 1 MiB, and queues 7 chunks of 64 KiB on each, within its queue's
    /// limit; returns the bytes queued.
    private static func queueChunks(on rig: Rig, streams: Int) async throws -> Int {
        let chunk = [UInt8](repeating: 7, count: 64 << 10)
        var queued = 0
        for index in 0..<streams {
            let number = try rig.connection.openChannel(kind: .stream, size: 0, name: Array("s\(index)".utf8))
            try rig.receive(.credit(channel: number, increment: 1 << 20))
            for _ in 0..<7 {
                let frame = chunk.withUnsafeBytes { FrameEncoder.chunkFrame(channel: number, $0) }
                try await rig.connection.sendChunk(frame, payloadLength: chunk.count, on: number)
                queued += chunk.count
            }
        }
        return queued
    }

    /// The bytes the CHUNK frames among `frames` carry.
    private static func chunkBytes(_ frames: [Frame]) -> Int {
        frames.reduce(0) { sum, frame in if case .chunk(_, let bytes) = frame { sum + bytes.readableBytes } else { sum }
        }
    }

    @Test("channel frames beyond the event loop's turn wait for its next poll or its wake; messages do not")
    func writeTurn() async throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        _ = try rig.written()
        let queued = try await Self.queueChunks(on: rig, streams: 4)
        rig.channel.embeddedEventLoop.run()
        let first = Self.chunkBytes(try rig.written())
        #expect(first >= WriteTurnBudget.defaultLimit, "a whole turn goes")
        #expect(first <= WriteTurnBudget.defaultLimit + (64 << 10), "and no more than its last frame")
        // A message queued now goes at once: the turn holds channel frames only.
        let message = FrameEncoder.buffer(for: .data(ByteBuffer(string: "hi")), allocator: rig.channel.allocator)
        _ = try rig.connection.enqueue(EncodedFrame(head: message))
        rig.channel.embeddedEventLoop.run()
        let meanwhile = try rig.written()
        #expect(meanwhile.contains { if case .data = $0 { true } else { false } }, "\(meanwhile)")
        #expect(Self.chunkBytes(meanwhile) == 0, "the chunks wait for the next turn")
        // A read means the loop polled: the rest goes in the next turn.
        try rig.receive(.keepalive)
        rig.channel.embeddedEventLoop.run()
        #expect(first + Self.chunkBytes(try rig.written()) == queued)
    }

    @Test("with nothing to read, the waiting channel frames go once the turn's wake comes")
    func writeTurnWake() async throws {
        let rig = try Rig(role: .inviter(Self.invitation))
        try rig.establishAsInviter()
        _ = try rig.written()
        let queued = try await Self.queueChunks(on: rig, streams: 3)
        rig.channel.embeddedEventLoop.run()
        let first = Self.chunkBytes(try rig.written())
        #expect(first < queued)
        rig.channel.embeddedEventLoop.advanceTime(by: WriteTurnBudget.wakeAfter - .nanoseconds(1))
        #expect(Self.chunkBytes(try rig.written()) == 0, "not before the wake")
        rig.channel.embeddedEventLoop.advanceTime(by: .nanoseconds(1))
        #expect(first + Self.chunkBytes(try rig.written()) == queued)
    }
}

/// What a test makes the kernel say about the socket's unsent bytes (`TCP_INFO`).
private final class KernelFigures {
    var notSent = 0

    /// A `struct tcp_info` with `notSent` unsent bytes and a delivery rate of 2.5 Mbit/s.
    var info: TCPLinkInfo {
        var bytes = [UInt8](repeating: 0, count: 232)
        for (offset, length, value) in [(144, 4, UInt64(notSent)), (160, 8, UInt64(312_500))] {
            for index in 0..<length { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        return TCPLinkInfo(RawTCPInfo(bytes: bytes))
    }
}

/// A future's result if it has completed, without blocking: on the embedded loop a callback on a
/// completed future runs at once, and `wait()` on one that never completes would hang the test.
private func outcome<Value>(of future: EventLoopFuture<Value>) -> Result<Value, any Error>? {
    var result: Result<Value, any Error>?
    future.assumeIsolated().whenComplete { result = $0 }
    return result
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

/// Records a connection's events and answers every message with the same read demand.
private final class RecordingDelegate: ConnectionDelegate {
    private let recorded = NIOLockedValueBox<[ConnectionEvent]>([])
    private let demand: ConnectionReadDemand

    init(demand: ConnectionReadDemand) {
        self.demand = demand
    }

    var events: [ConnectionEvent] { recorded.withLockedValue { $0 } }

    /// The reasons of the `.closed` events, in order.
    var closedReasons: [DisconnectReason] {
        events.compactMap { if case .closed(_, let reason) = $0 { reason } else { nil } }
    }

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        recorded.withLockedValue { $0.append(event) }
        if case .message = event { return demand }
        return .more
    }
}

/// Answers each message as a session's responder does: from the handler's read, through the connection.
private final class AnsweringDelegate: ConnectionDelegate, @unchecked Sendable {
    // @unchecked: used only on the embedded channel's loop, which is the test's thread.
    var answer: (Connection, ByteBuffer) -> Void = { _, _ in }

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        if case .message(let message, _) = event { answer(connection, message) }
        return .more
    }
}

/// Counts the reads that reach it on their way to the socket.
private final class ReadCounter: ChannelOutboundHandler, @unchecked Sendable {
    // @unchecked: used only on the embedded channel's loop, which is the test's thread.
    typealias OutboundIn = Any

    private(set) var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }

}
