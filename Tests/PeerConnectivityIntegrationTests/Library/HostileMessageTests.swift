import Foundation
import PeerConnectivity
import Testing

/// A hand-written peer sends large messages (message channels) that break their rules to a real session.
@Suite("Hostile large messages", .timeLimit(.minutes(1 * slowdown)))
struct HostileMessageTests {
    /// A session accepting messages of up to 2 MiB, and a raw socket that has joined it.
    private static func target() async throws -> RawJoinedSession {
        var configuration = Session.Configuration.patient
        configuration.maximumMessageLength = 2 << 20
        return try await RawJoinedSession("message-target", configuration: configuration)
    }

    private static func openMessage(channel: UInt32, size: UInt64) -> [UInt8] {
        HandFrames.frame(type: 0x20, body: HandFrames.bigEndian(channel) + [3] + HandFrames.bigEndian(size))
    }

    private static func end(channel: UInt32) -> [UInt8] {
        HandFrames.frame(type: 0x22, body: HandFrames.bigEndian(channel))
    }

    @Test("over the announced size: RESET 6 at OPEN, the link stays up; a whole one is delivered and confirmed")
    func refusedThenDelivered() async throws {
        let target = try await Self.target()
        target.socket.send(Self.openMessage(channel: 1, size: (2 << 20) + 1))
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(1)) + [6])
        // Its chunks in flight are dropped; the next message arrives whole and is confirmed (DONE).
        let content = [UInt8](repeating: 0x5A, count: 1000)
        target.socket.send(
            HandFrames.chunk(channel: 1, content) + Self.openMessage(channel: 3, size: 1000)
                + HandFrames.chunk(channel: 3, Array(content[..<600]))
                + HandFrames.chunk(channel: 3, Array(content[600...]))
                + Self.end(channel: 3)
        )
        #expect(await target.socket.readFrame(ofType: 0x25) == HandFrames.bigEndian(UInt32(3)))
        #expect(try await eventually { target.log.messages == [Data(content)] })
        await target.stop()
    }

    @Test("over the session's memory budget: RESET 8 at OPEN; one that fits arrives whole; a peer that leaves lets go")
    func overTheBudget() async throws {
        var configuration = Session.Configuration.patient
        configuration.maximumMessageLength = 2 << 20
        // Room for one message of the largest size and 256 KiB beside it.
        configuration.largeMessageBudget = (2 << 20) + (256 << 10)
        let target = try await RawJoinedSession("message-budget", configuration: configuration)
        let session = target.session
        // The first is counted whole at OPEN, before its bytes come; the second (the second message open,
        // which the channel table takes) would take the session over the budget.
        target.socket.send(
            Self.openMessage(channel: 1, size: 2 << 20)
                + HandFrames.chunk(channel: 1, [UInt8](repeating: 1, count: 1000))
                + Self.openMessage(channel: 3, size: 2 << 20)
        )
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(3)) + [8])
        #expect(session.largeMessageBytesGathering == 2 << 20)
        // One that fits beside it is taken, and delivered whole (within the first window: no CREDIT needed).
        let content = (0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var frames = Self.openMessage(channel: 5, size: UInt64(content.count))
        for start in stride(from: 0, to: content.count, by: 1 << 16) {
            frames += HandFrames.chunk(channel: 5, Array(content[start..<min(start + (1 << 16), content.count)]))
        }
        target.socket.send(frames + Self.end(channel: 5))
        #expect(await target.socket.readFrame(ofType: 0x25) == HandFrames.bigEndian(UInt32(5)))
        #expect(try await eventually { target.log.messages == [Data(content)] })
        #expect(session.largeMessageBytesGathering == 2 << 20, "a delivered message is no longer counted")
        // The writer resets the first (RESET 1): the receiver lets go of it, and a 2 MiB message fits again.
        target.socket.send(HandFrames.frame(type: 0x23, body: HandFrames.bigEndian(UInt32(1)) + [1]))
        #expect(try await eventually { session.largeMessageBytesGathering == 0 })
        target.socket.send(
            Self.openMessage(channel: 7, size: 2 << 20)
                + HandFrames.chunk(channel: 7, [UInt8](repeating: 2, count: 1000))
        )
        #expect(try await eventually { session.largeMessageBytesGathering == 2 << 20 })
        // The peer leaves with the message half sent: the session lets go of it.
        shutdown(target.socket.fd, Int32(SHUT_RDWR))
        #expect(try await eventually { session.largeMessageBytesGathering == 0 }, "a closed link lets go of all")
        #expect(try await eventually { session.connectedPeers.isEmpty })
        #expect(target.log.messages.count == 1, "nothing else was delivered")
        await target.stop()
        await session.disconnect()
    }

    @Test("a peer that refuses a large message busy (RESET 8): send says so, and a later one goes")
    func refusedBusyBySender() async throws {
        let target = try await RawJoinedSession(
            "message-busy",
            configuration: .default,
            maximumMessageLength: 4 << 20
        )
        let session = target.session
        let peer = try #require(session.connectedPeers.first)
        let refused = Task { try await session.send(Data(count: 2 << 20), toPeers: [peer]) }
        let open = try #require(await target.socket.readFrame(ofType: 0x20))
        let channel = Array(open[0..<4])
        target.socket.send(HandFrames.frame(type: 0x23, body: channel + [8]))
        let error = await #expect(throws: SessionError.self) { try await refused.value }
        #expect("\(String(describing: error))".contains("busy"), "\(String(describing: error))")
        // The turn is free: the next large message opens its channel.
        let next = Task { try await session.send(Data(count: 2 << 20), toPeers: [peer]) }
        let nextOpen = try #require(await target.socket.readFrame(ofType: 0x20))
        #expect(Array(nextOpen[0..<4]) != channel)
        next.cancel()
        _ = try? await next.value
        await target.stop()
        await session.disconnect()
    }

    @Test("bytes past the size, or an END short of it, close the connection with GOODBYE 7")
    func pastTheSize() async throws {
        for tooMuch in [true, false] {
            let target = try await Self.target()
            target.socket.send(
                Self.openMessage(channel: 1, size: 10)
                    + HandFrames.chunk(channel: 1, [UInt8](repeating: 1, count: tooMuch ? 11 : 9))
                    + Self.end(channel: 1)
            )
            let reply = try #require(await target.socket.readUntilClosed())
            #expect(reply.suffix(6) == [0, 0, 0, 2, 0x12, 7], "GOODBYE 7 last: \(reply.suffix(6))")
            #expect(target.log.messages.isEmpty)
            await target.stop()
        }
    }

    @Test("a DATA frame over 1 MiB closes the connection, however large the messages the session accepts")
    func dataOverTheInlineLimit() async throws {
        let target = try await Self.target()
        target.socket.send(HandFrames.data([UInt8](repeating: 7, count: (1 << 20) + 1)))
        let reply = try #require(await target.socket.readUntilClosed())
        #expect(reply.suffix(6) == [0, 0, 0, 2, 0x12, 7])
        #expect(target.log.messages.isEmpty)
        await target.stop()
    }
}
