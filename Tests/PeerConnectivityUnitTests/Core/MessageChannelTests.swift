import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

private typealias F = Fixtures

/// The rules of a channel of kind message (a reliable message over the inline limit): its size is
/// checked at OPEN against what this side accepts, and the bytes must add up to it exactly.
@Suite("Message channels")
struct MessageChannelTests {
    /// The invitee's table, accepting messages of up to `limit` bytes.
    private func table(limit: Int = 4 << 20) -> ChannelTable {
        ChannelTable(localIsInviter: false, maximumIncomingChannels: 8, maximumMessageLength: limit)
    }

    private func open(_ channel: UInt32, size: UInt64) -> Frame.Open {
        Frame.Open(channel: channel, kind: .message, size: size, name: [])
    }

    private func violationDetail(_ action: ChannelTable.Action) -> String? {
        guard case .violation(let error) = action else { return nil }
        return error.description
    }

    @Test("a message of the size announced: OPEN, CHUNKs that add up to it, END")
    func whole() {
        var table = table()
        #expect(table.frameReceived(.open(open(1, size: 3000))) == .opened(open(1, size: 3000)))
        let first = F.pattern(count: 2000)
        let second = F.pattern(count: 1000, seed: 7)
        #expect(table.frameReceived(.chunk(channel: 1, first)) == .received(channel: 1, first))
        #expect(table.frameReceived(.chunk(channel: 1, second)) == .received(channel: 1, second))
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .ended(channel: 1, digest: nil))
        #expect(table.inboundCount == 0)
    }

    @Test("a size over the limit is refused at OPEN with RESET too large, and the connection goes on")
    func tooLarge() {
        var table = table(limit: 2 << 20)
        let action = table.frameReceived(.open(open(1, size: (2 << 20) + 1)))
        guard case .refuse(let channel, let code, let reason) = action else {
            Issue.record("expected a refusal, got \(action)")
            return
        }
        #expect(channel == 1)
        #expect(code == .tooLarge)
        #expect(reason == "a message of 2097153 bytes; this side accepts at most 2097152")
        #expect(table.inboundCount == 0)
        // Its chunks in flight are dropped as late frames; the next channel opens as usual.
        #expect(table.frameReceived(.chunk(channel: 1, F.buffer("x"))) == .none)
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .none)
        #expect(table.frameReceived(.open(open(3, size: 2 << 20))) == .opened(open(3, size: 2 << 20)))
    }

    @Test("a third message arriving at once is refused as busy; streams are not counted")
    func busy() {
        var table = table()
        #expect(table.frameReceived(.open(open(1, size: 10))) == .opened(open(1, size: 10)))
        #expect(table.frameReceived(.open(open(3, size: 10))) == .opened(open(3, size: 10)))
        let stream = Frame.Open(channel: 5, kind: .stream, size: 0, name: [0x61])
        #expect(table.frameReceived(.open(stream)) == .opened(stream))
        #expect(
            table.frameReceived(.open(open(7, size: 10)))
                == .refuse(channel: 7, .busy, reason: "2 messages are arriving already")
        )
        _ = table.frameReceived(.chunk(channel: 1, F.pattern(count: 10)))
        _ = table.frameReceived(.end(channel: 1, digest: nil))
        #expect(table.frameReceived(.open(open(9, size: 10))) == .opened(open(9, size: 10)))
    }

    @Test("the limit follows what the connection announced")
    func limitChanges() {
        var table = table(limit: 100)
        table.maximumMessageLength = 16 << 20
        #expect(table.frameReceived(.open(open(1, size: 16 << 20))) == .opened(open(1, size: 16 << 20)))
    }

    @Test("bytes past the size announced break the protocol")
    func chunkPastSize() {
        var table = table()
        _ = table.frameReceived(.open(open(1, size: 1500)))
        _ = table.frameReceived(.chunk(channel: 1, F.pattern(count: 1000)))
        #expect(
            violationDetail(table.frameReceived(.chunk(channel: 1, F.pattern(count: 501))))
                == "malformed CHUNK frame: 501 bytes on message channel 1, 500 left of its size"
        )
    }

    @Test("an END before the size is reached breaks the protocol; a CHUNK after END is a late frame")
    func endEarlyAndLate() {
        var early = table()
        _ = early.frameReceived(.open(open(1, size: 1500)))
        _ = early.frameReceived(.chunk(channel: 1, F.pattern(count: 1000)))
        #expect(
            violationDetail(early.frameReceived(.end(channel: 1, digest: nil)))
                == "malformed END frame: message channel 1 ended 500 bytes short of its size"
        )
        var late = table()
        _ = late.frameReceived(.open(open(1, size: 10)))
        _ = late.frameReceived(.chunk(channel: 1, F.pattern(count: 10)))
        #expect(late.frameReceived(.end(channel: 1, digest: nil)) == .ended(channel: 1, digest: nil))
        #expect(late.frameReceived(.chunk(channel: 1, F.pattern(count: 1))) == .none)
        #expect(late.frameReceived(.end(channel: 1, digest: nil)) == .none)
    }

    @Test("a message's END carries no digest")
    func noDigest() {
        var table = table()
        _ = table.frameReceived(.open(open(1, size: 0)))
        #expect(
            violationDetail(table.frameReceived(.end(channel: 1, digest: [UInt8](repeating: 0, count: 32))))
                == "malformed END frame: a message's END has a digest"
        )
    }

    @Test("the window still bounds what is in flight on a message channel")
    func window() {
        var table = table(limit: 16 << 20)
        _ = table.frameReceived(.open(open(1, size: 16 << 20)))
        let chunk = F.pattern(count: WireProtocol.maximumChunkLength)
        for _ in 0..<(WireProtocol.initialChannelWindow / WireProtocol.maximumChunkLength) {
            #expect(table.frameReceived(.chunk(channel: 1, chunk)) == .received(channel: 1, chunk))
        }
        #expect(violationDetail(table.frameReceived(.chunk(channel: 1, F.pattern(count: 1)))) != nil)
    }

    @Test("OPEN of a message: no name, a size; round-trips through the codec")
    func codec() throws {
        var buffer = ByteBuffer()
        FrameEncoder.encode(.open(open(3, size: 2 << 20)), into: &buffer)
        #expect(Array(buffer.readableBytesView) == [0, 0, 0, 14, 0x20, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0x20, 0, 0])
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: 1 << 20) == .open(open(3, size: 2 << 20)))
    }

    @Test("once connected, the frame limit fits DATA up to the inline limit, not the largest message")
    func frameLimit() {
        let limit = WireProtocol.maximumFrameLength(forMessageLength: 16 << 20)
        #expect(limit == 1 + WireProtocol.inlineMessageLimit)
        #expect(WireProtocol.inlineMessageLimit == 1 << 20)
        #expect(WireProtocol.maximumFrameLength(forMessageLength: 1000) == 1 + 4 + 1024 + (1 << 16))
        #expect(WireProtocol.defaultMaximumMessageLength == 16 << 20)
    }

    @Test("the writer gives a message up while its chunks go: RESET 1 drops it; late frames are dropped too")
    func cancelledWhileSending() {
        var table = table()
        #expect(table.frameReceived(.open(open(1, size: 3000))) == .opened(open(1, size: 3000)))
        let first = F.pattern(count: 1000)
        #expect(table.frameReceived(.chunk(channel: 1, first)) == .received(channel: 1, first))
        #expect(table.frameReceived(.reset(channel: 1, .cancelled)) == .reset(channel: 1, .cancelled))
        #expect(table.inboundCount == 0, "its place is free")
        #expect(table.frameReceived(.chunk(channel: 1, F.pattern(count: 10))) == .none)
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .none)
        #expect(table.frameReceived(.open(open(3, size: 10))) == .opened(open(3, size: 10)))
    }

    @Test("the writer gives a message up after its END (waiting for DONE): the RESET is passed on, nothing breaks")
    func cancelledAfterEnd() {
        var table = table()
        let bytes = F.pattern(count: 3000)
        #expect(table.frameReceived(.open(open(1, size: 3000))) == .opened(open(1, size: 3000)))
        #expect(table.frameReceived(.chunk(channel: 1, bytes)) == .received(channel: 1, bytes))
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .ended(channel: 1, digest: nil))
        // Delivered and confirmed here already; the session finds no transfer for it and ignores it.
        #expect(table.frameReceived(.reset(channel: 1, .cancelled)) == .reset(channel: 1, .cancelled))
        #expect(table.inboundCount == 0)
    }

    @Test("the writer's side: a DONE that crosses its RESET is passed on, not a violation")
    func doneCrossesReset() {
        // The inviter opened channel 1, sent it whole, gave it up; the invitee's DONE was on its way.
        var writer = ChannelTable(localIsInviter: true, maximumIncomingChannels: 8, maximumMessageLength: 4 << 20)
        #expect(writer.frameReceived(.done(channel: 1)) == .done(channel: 1))
        #expect(writer.frameReceived(.reset(channel: 1, .busy)) == .reset(channel: 1, .busy))
    }
}
