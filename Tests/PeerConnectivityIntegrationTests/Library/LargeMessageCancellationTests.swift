import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Cancelling the task that sends a large message (over 1 MiB, a channel of its own), at each stage: while
/// it waits for its turn behind another large message, while its chunks go, and while it waits for the
/// peer's DONE. The peer is a hand-written one that grants credit and answers DONE only when the test says.
///
/// The time limit is a hang guard with room: alone the suite takes about a second; in the suite, beside the flood
/// tests on the same event loops and a build on the same two cores, one test once ran past a minute.
@Suite("Cancelling a large message", .timeLimit(.minutes(4 * slowdown)))
struct LargeMessageCancellationTests {
    /// A session and a raw peer joined to it that takes messages of up to 16 MiB.
    private static func target(_ name: String) async throws -> (RawJoinedSession, PeerID) {
        let joined = try await RawJoinedSession(name, configuration: .default, maximumMessageLength: 16 << 20)
        let peer = try #require(joined.session.connectedPeers.first)
        return (joined, peer)
    }

    /// `count` bytes whose storage says when it is freed.
    private static func tracked(_ count: Int, freed: Locked<Bool>) -> Data {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0x5A, count: count)
        return Data(
            bytesNoCopy: bytes,
            count: count,
            deallocator: .custom { address, _ in
                address.deallocate()
                freed.withLock { $0 = true }
            }
        )
    }

    /// Reads frames until OPEN; returns its channel and announced size.
    private static func readOpen(_ socket: RawSocket) async throws -> (channel: UInt32, size: UInt64) {
        let body = try #require(await socket.readFrame(ofType: 0x20))
        #expect(body[4] == 3, "a message channel")
        return (uint32(body[0..<4]), body[5..<13].reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Reads frames until the one of `type` about `channel` (CHUNKs of it are counted into `chunked`).
    private static func read(_ type: UInt8, on channel: UInt32, from socket: RawSocket, chunked: inout Int)
        async -> [UInt8]?
    {
        while let frame = await socket.readFrame() {
            guard frame.body.count >= 4, uint32(frame.body[0..<4]) == channel else { continue }
            if frame.type == 0x21 { chunked += frame.body.count - 4 }
            if frame.type == type { return frame.body }
        }
        return nil
    }

    private static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.reduce(0) { $0 << 8 | UInt32($1) } }

    private static func credit(_ channel: UInt32, _ increment: UInt32) -> [UInt8] {
        HandFrames.frame(type: 0x24, body: HandFrames.bigEndian(channel) + HandFrames.bigEndian(increment))
    }

    private static func done(_ channel: UInt32) -> [UInt8] {
        HandFrames.frame(type: 0x25, body: HandFrames.bigEndian(channel))
    }

    @Test("cancelled while its chunks go: RESET 1, CancellationError, its bytes freed, and the next one goes")
    func whileChunksGo() async throws {
        let (joined, peer) = try await Self.target("cancel-chunks")
        let session = joined.session
        let freed = Locked(false)
        let sender = Task { try await session.send(Self.tracked(4 << 20, freed: freed), toPeers: [peer]) }
        let (channel, size) = try await Self.readOpen(joined.socket)
        #expect(size == 4 << 20)
        // No CREDIT: the sender stops when no further chunk fits in the first window (256 KiB).
        var chunked = 0
        while chunked + FrameEncoder.chunkPayloadLength <= WireProtocol.initialChannelWindow {
            guard await Self.read(0x21, on: channel, from: joined.socket, chunked: &chunked) != nil else { break }
        }
        sender.cancel()
        await #expect(throws: CancellationError.self) { try await sender.value }
        #expect(
            await Self.read(0x23, on: channel, from: joined.socket, chunked: &chunked) == HandFrames.bigEndian(channel)
                + [1]
        )
        #expect(chunked <= WireProtocol.initialChannelWindow, "nothing past the window")
        #expect(try await eventually { freed.value }, "the message's bytes were freed")
        // The turn is free: the next large message opens its channel at once.
        let next = Task { try await session.send(Data(count: 2 << 20), toPeers: [peer]) }
        let (nextChannel, nextSize) = try await Self.readOpen(joined.socket)
        #expect(nextChannel > channel && nextSize == 2 << 20)
        next.cancel()
        _ = try? await next.value
        await joined.stop()
    }

    @Test("cancelled while it waits for DONE: RESET 1 after its END, CancellationError, and the next one goes")
    func whileWaitingForDone() async throws {
        let (joined, peer) = try await Self.target("cancel-done")
        let session = joined.session
        let freed = Locked(false)
        let sender = Task { try await session.send(Self.tracked(2 << 20, freed: freed), toPeers: [peer]) }
        let (channel, _) = try await Self.readOpen(joined.socket)
        joined.socket.send(Self.credit(channel, 2 << 20))
        var chunked = 0
        #expect(await Self.read(0x22, on: channel, from: joined.socket, chunked: &chunked) != nil, "END came")
        #expect(chunked == 2 << 20)
        // The peer never answers DONE.
        sender.cancel()
        await #expect(throws: CancellationError.self) { try await sender.value }
        #expect(
            await Self.read(0x23, on: channel, from: joined.socket, chunked: &chunked) == HandFrames.bigEndian(channel)
                + [1]
        )
        #expect(try await eventually { freed.value }, "the message's bytes were freed")
        // The next one goes, and returns once its DONE comes.
        let next = Task { try await session.send(Data(count: (1 << 20) + 1), toPeers: [peer]) }
        let (nextChannel, _) = try await Self.readOpen(joined.socket)
        joined.socket.send(Self.credit(nextChannel, 1 << 20))
        var nextChunked = 0
        #expect(await Self.read(0x22, on: nextChannel, from: joined.socket, chunked: &nextChunked) != nil)
        joined.socket.send(Self.done(nextChannel))
        try await next.value
        await joined.stop()
    }

    @Test("cancelled while it waits for its turn: it leaves the line, opens nothing, and the others go in order")
    func whileWaitingForItsTurn() async throws {
        let (joined, peer) = try await Self.target("cancel-turn")
        let session = joined.session
        let connection = try session.runtime.connection(to: peer, carrying: 2 << 20)
        let first = Task { try await session.send(Data(count: 2 << 20), toPeers: [peer]) }
        let (firstChannel, _) = try await Self.readOpen(joined.socket)
        let freed = Locked(false)
        let waiting = Task { try await session.send(Self.tracked(3 << 20, freed: freed), toPeers: [peer]) }
        #expect(try await eventually { connection.messagesWaitingForTurn == 1 })
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(connection.messagesWaitingForTurn == 0)
        #expect(try await eventually { freed.value })
        // A third waits behind the first, which goes on and ends; the third opens next: the second never did.
        let third = Task { try await session.send(Data(count: (1 << 20) + 7), toPeers: [peer]) }
        #expect(try await eventually { connection.messagesWaitingForTurn == 1 })
        joined.socket.send(Self.credit(firstChannel, 2 << 20))
        var chunked = 0
        #expect(await Self.read(0x22, on: firstChannel, from: joined.socket, chunked: &chunked) != nil)
        joined.socket.send(Self.done(firstChannel))
        try await first.value
        let (thirdChannel, thirdSize) = try await Self.readOpen(joined.socket)
        #expect(thirdSize == (1 << 20) + 7, "the cancelled message never opened a channel")
        joined.socket.send(Self.credit(thirdChannel, 1 << 20))
        chunked = 0
        #expect(await Self.read(0x22, on: thirdChannel, from: joined.socket, chunked: &chunked) != nil)
        joined.socket.send(Self.done(thirdChannel))
        try await third.value
        await joined.stop()
    }

    @Test("the receiver of a cancelled message lets go of what it gathered and delivers nothing")
    func receiverLetsGo() async throws {
        // The receiver stops reading its socket once a delivered message is not taken: the next message then
        // stays partly sent, and its sender is cancelled there.
        var configuration = Session.Configuration.patient
        configuration.receiveBufferLimit = 1 << 20
        let receiver = Session(peer: try PeerID(displayName: "receiver"), configuration: configuration)
        let sender = Session(peer: try PeerID(displayName: "sender"))
        try await sender.connectInProcess(to: receiver, timeout: invitationTimeout)
        try await sender.send(pattern(count: 2 << 20, seed: 1), toPeers: [receiver.peer])
        let cut = Task { try await sender.send(pattern(count: 8 << 20, seed: 2), toPeers: [receiver.peer]) }
        // Its chunks cannot all go while the receiver does not read: the sender waits for credit.
        let connection = try sender.runtime.connection(to: receiver.peer, carrying: 8 << 20)
        #expect(try await eventually { connection.outgoingChannelCount == 1 })
        cut.cancel()
        await #expect(throws: CancellationError.self) { try await cut.value }
        let after = pattern(count: 3 << 20, seed: 3)
        let last = Task { try await sender.send(after, toPeers: [receiver.peer]) }
        // The application reads: the receiver reads its socket again, takes the RESET and lets go.
        var delivered: [Data] = []
        for await event in receiver.events {
            guard case .dataReceived(let data, _, _) = event else { continue }
            delivered.append(data)
            if delivered.count == 2 { break }
        }
        try await last.value
        #expect(delivered.map(\.count) == [2 << 20, 3 << 20], "the cancelled message was not delivered")
        #expect(delivered.last == after)
        #expect(receiver.largeMessageBytesGathering == 0)
        #expect(receiver.runtime.transfers.withLock { $0.isEmpty })
        await sender.disconnect()
        await receiver.disconnect()
    }

    @Test("between sessions joined in the process: one cancelled while queued is never delivered; the others are")
    func queuedInProcess() async throws {
        // The receiver stops reading once a delivered message is not taken: the next message stays partly
        // sent, and a third waits for its turn behind it.
        var configuration = Session.Configuration.patient
        configuration.receiveBufferLimit = 1 << 20
        let receiver = Session(peer: try PeerID(displayName: "receiver"), configuration: configuration)
        let sender = Session(peer: try PeerID(displayName: "sender"))
        try await sender.connectInProcess(to: receiver, timeout: invitationTimeout)
        try await sender.send(pattern(count: 2 << 20, seed: 1), toPeers: [receiver.peer])
        let stalled = pattern(count: 4 << 20, seed: 2)
        let first = Task { try await sender.send(stalled, toPeers: [receiver.peer]) }
        let connection = try sender.runtime.connection(to: receiver.peer, carrying: 4 << 20)
        #expect(try await eventually { connection.outgoingChannelCount == 1 })
        let freed = Locked(false)
        let queued = Task { try await sender.send(Self.tracked(3 << 20, freed: freed), toPeers: [receiver.peer]) }
        #expect(try await eventually { connection.messagesWaitingForTurn == 1 })
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(connection.messagesWaitingForTurn == 0)
        #expect(try await eventually { freed.value }, "the queued message's bytes were let go")
        let after = pattern(count: (1 << 20) + 5, seed: 3)
        let last = Task { try await sender.send(after, toPeers: [receiver.peer]) }
        var delivered: [Data] = []
        for await event in receiver.events {
            guard case .dataReceived(let data, _, _) = event else { continue }
            delivered.append(data)
            if delivered.count == 3 { break }
        }
        try await first.value
        try await last.value
        #expect(delivered.map(\.count) == [2 << 20, 4 << 20, (1 << 20) + 5], "the cancelled one never arrived")
        #expect(delivered[1] == stalled && delivered[2] == after)
        #expect(receiver.largeMessageBytesGathering == 0)
        await sender.disconnect()
        await receiver.disconnect()
    }
}
