import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

private typealias F = Fixtures

@Suite("ChannelTable")
struct ChannelTableTests {
    /// The invitee's table: the peer (the inviter) opens odd channels, this side even ones.
    private func inviteeTable(limit: Int = 8) -> ChannelTable {
        ChannelTable(localIsInviter: false, maximumIncomingChannels: limit)
    }

    private func open(_ channel: UInt32, _ kind: ChannelKind = .stream, size: UInt64 = 0) -> Frame.Open {
        Frame.Open(channel: channel, kind: kind, size: size, name: Array("name-\(channel)".utf8))
    }

    private func violationDetail(_ action: ChannelTable.Action) -> String? {
        guard case .violation(let error) = action else { return nil }
        return error.description
    }

    @Test("channel numbers: the inviter's are odd, the invitee's even")
    func numbering() {
        #expect(ChannelTable.firstLocalChannel(localIsInviter: true) == 1)
        #expect(ChannelTable.firstLocalChannel(localIsInviter: false) == 2)
        var inviter = ChannelTable(localIsInviter: true, maximumIncomingChannels: 8)
        #expect(inviter.frameReceived(.open(open(2))) == .opened(open(2)))
        #expect(
            violationDetail(inviter.frameReceived(.open(open(3))))
                == "malformed OPEN frame: channel 3 was opened by this side; only the opener sends OPEN"
        )
    }

    @Test("a stream's life: OPEN, CHUNKs within the window, CREDIT given back, END")
    func streamLife() {
        var table = inviteeTable()
        #expect(table.frameReceived(.open(open(1))) == .opened(open(1)))
        #expect(table.window(of: 1) == WireProtocol.initialChannelWindow)
        let chunk = F.pattern(count: 1000)
        #expect(table.frameReceived(.chunk(channel: 1, chunk)) == .received(channel: 1, chunk))
        #expect(table.window(of: 1) == WireProtocol.initialChannelWindow - 1000)
        #expect(table.grant(1000, on: 1) == .credit(channel: 1, increment: 1000))
        #expect(table.window(of: 1) == WireProtocol.initialChannelWindow)
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .ended(channel: 1, digest: nil))
        #expect(table.inboundCount == 0)
        #expect(table.grant(10, on: 1) == nil)
    }

    @Test("the peer's resources and folders are counted while open, whichever way each ends")
    func blockChannelsCounted() {
        var table = inviteeTable(limit: 5)
        _ = table.frameReceived(.open(open(1)))
        _ = table.frameReceived(.open(open(3, .message, size: 10)))
        #expect(table.inboundBlockChannels == 0)
        _ = table.frameReceived(.open(open(5, .resource, size: 0)))
        _ = table.frameReceived(.open(open(7, .folder, size: 1 << 20)))
        _ = table.frameReceived(.open(open(9, .resource, size: 1 << 20)))
        #expect(table.inboundBlockChannels == 3)
        // Over the channel limit: refused, never counted.
        #expect(table.frameReceived(.open(open(11, .resource, size: 1))) != .opened(open(11, .resource, size: 1)))
        #expect(table.inboundBlockChannels == 3)
        // Its END (an empty resource has no blocks), the peer's RESET, this side's RESET.
        #expect(table.frameReceived(.end(channel: 5, digest: [UInt8](repeating: 0, count: 32))) != .none)
        #expect(table.inboundBlockChannels == 2)
        #expect(table.frameReceived(.reset(channel: 7, .cancelled)) == .reset(channel: 7, .cancelled))
        #expect(table.inboundBlockChannels == 1)
        #expect(table.reset(9, .cancelled) != nil)
        #expect(table.inboundBlockChannels == 0)
        // Frames about channels already gone, and a stream's end, change nothing.
        _ = table.frameReceived(.reset(channel: 9, .cancelled))
        _ = table.frameReceived(.end(channel: 5, digest: [UInt8](repeating: 0, count: 32)))
        #expect(table.reset(7, .cancelled) != nil)
        _ = table.frameReceived(.end(channel: 1, digest: nil))
        #expect(table.inboundBlockChannels == 0)
        #expect(table.inboundCount == 1)
    }

    @Test("a CHUNK one byte over the window breaks the protocol; exactly the window does not")
    func windowEnforced() {
        var table = inviteeTable()
        _ = table.frameReceived(.open(open(1)))
        let full = WireProtocol.initialChannelWindow
        var sent = 0
        while sent < full {
            let length = min(WireProtocol.maximumChunkLength, full - sent)
            #expect(table.frameReceived(.chunk(channel: 1, F.pattern(count: length))) != .none)
            sent += length
        }
        #expect(table.window(of: 1) == 0)
        let action = table.frameReceived(.chunk(channel: 1, F.pattern(count: 1)))
        #expect(violationDetail(action) == "malformed CHUNK frame: 1 bytes on channel 1 exceed its window of 0")
    }

    @Test("credit is capped at the largest window")
    func creditCap() {
        var table = inviteeTable()
        _ = table.frameReceived(.open(open(1)))
        let room = WireProtocol.maximumChannelWindow - WireProtocol.initialChannelWindow
        #expect(table.grant(Int(UInt32.max), on: 1) == .credit(channel: 1, increment: UInt32(room)))
        #expect(table.grant(1, on: 1) == nil)
    }

    @Test("numbers must rise: reusing or going back breaks the protocol")
    func numbersRise() {
        var table = inviteeTable()
        _ = table.frameReceived(.open(open(5)))
        #expect(
            violationDetail(table.frameReceived(.open(open(5))))
                == "malformed OPEN frame: channel 5 is not above 5, the last one opened"
        )
        var other = inviteeTable()
        _ = other.frameReceived(.open(open(5)))
        #expect(violationDetail(other.frameReceived(.open(open(3)))) != nil)
    }

    @Test("frames for a channel that ended are dropped, but RESET; for one never opened they break the protocol")
    func lateAndUnknown() {
        var table = inviteeTable()
        _ = table.frameReceived(.open(open(1)))
        #expect(table.reset(1, .cancelled) == .reset(channel: 1, .cancelled))
        #expect(table.inboundCount == 0)
        // After it ended, a RESET still goes out (a resource refused after its END), but only for
        // channels the peer opened.
        #expect(table.reset(1, .digestMismatch) == .reset(channel: 1, .digestMismatch))
        #expect(table.reset(3, .cancelled) == nil)
        #expect(table.reset(2, .cancelled) == nil)
        #expect(table.frameReceived(.chunk(channel: 1, F.buffer("late"))) == .none)
        #expect(table.frameReceived(.end(channel: 1, digest: nil)) == .none)
        #expect(table.frameReceived(.reset(channel: 1, .cancelled)) == .reset(channel: 1, .cancelled))
        for frame: Frame in [
            .chunk(channel: 3, F.buffer("x")), .end(channel: 3, digest: nil), .reset(channel: 3, .failed),
        ] {
            #expect(
                violationDetail(table.frameReceived(frame))
                    == "malformed \(frame.type) frame: channel 3 was never opened"
            )
        }
    }

    @Test("CREDIT and DONE come only for channels this side opened; CHUNK and END only for the peer's")
    func directions() {
        var table = inviteeTable()
        #expect(table.frameReceived(.credit(channel: 2, increment: 5)) == .credited(channel: 2, increment: 5))
        #expect(table.frameReceived(.done(channel: 2)) == .done(channel: 2))
        #expect(table.frameReceived(.reset(channel: 2, .digestMismatch)) == .reset(channel: 2, .digestMismatch))
        #expect(violationDetail(table.frameReceived(.credit(channel: 1, increment: 5))) != nil)
        #expect(violationDetail(table.frameReceived(.done(channel: 1))) != nil)
        #expect(violationDetail(table.frameReceived(.chunk(channel: 2, F.buffer("x")))) != nil)
        #expect(violationDetail(table.frameReceived(.end(channel: 2, digest: nil))) != nil)
    }

    @Test("a resource's END must carry a digest, a stream's must not")
    func endDigest() {
        let digest = [UInt8](repeating: 7, count: WireProtocol.digestLength)
        var table = inviteeTable()
        _ = table.frameReceived(.open(open(1, .resource, size: 10)))
        #expect(
            table.frameReceived(.end(channel: 1, digest: nil))
                == .violation(.malformed(.end, "a resource's END has no digest"))
        )
        var streams = inviteeTable()
        _ = streams.frameReceived(.open(open(1)))
        #expect(
            violationDetail(streams.frameReceived(.end(channel: 1, digest: digest)))
                == "malformed END frame: a stream's END has a digest"
        )
        var resources = inviteeTable()
        _ = resources.frameReceived(.open(open(1, .resource, size: 10)))
        #expect(resources.frameReceived(.end(channel: 1, digest: digest)) == .ended(channel: 1, digest: digest))
    }

    @Test("past the limit of open channels, an OPEN is refused; closing one makes room")
    func limit() {
        var table = inviteeTable(limit: 64)
        for index in 0..<64 {
            let channel = UInt32(2 * index + 1)
            #expect(table.frameReceived(.open(open(channel))) == .opened(open(channel)))
        }
        #expect(
            table.frameReceived(.open(open(129)))
                == .refuse(channel: 129, .refused, reason: "64 channels are open already")
        )
        #expect(table.frameReceived(.chunk(channel: 129, F.buffer("x"))) == .none, "a refused channel counts as ended")
        _ = table.frameReceived(.end(channel: 1, digest: nil))
        #expect(table.frameReceived(.open(open(131))) == .opened(open(131)))
        #expect(table.inboundCount == 64)
    }
}
