import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

private typealias F = Fixtures

/// `ChannelTable` on resource channels: BLOCK before each block's CHUNKs, HAVE back to the writer,
/// and the resources too large for the protocol.
@Suite("ChannelTable: resource blocks")
struct ChannelTableResourceTests {
    private static let mebibyte = WireProtocol.resourceBlockLength
    /// Two whole blocks and a last one of 10 bytes.
    private static let size = UInt64(2 * mebibyte + 10)

    private static func digest(_ byte: UInt8) -> [UInt8] {
        [UInt8](repeating: byte, count: WireProtocol.blockDigestLength)
    }

    private static func open(_ channel: UInt32, _ kind: ChannelKind = .resource, size: UInt64 = size) -> Frame.Open {
        Frame.Open(
            channel: channel,
            kind: kind,
            size: size,
            name: kind == .message ? [] : Array("file-\(channel)".utf8)
        )
    }

    /// The invitee's table with resource channel 1 open from the peer, its window wide enough for
    /// whole blocks.
    private static func tableWithResource(size: UInt64 = size) -> ChannelTable {
        var table = ChannelTable(localIsInviter: false, maximumIncomingChannels: 8)
        #expect(table.frameReceived(.open(open(1, size: size))) == .opened(open(1, size: size)))
        _ = table.grant(4 * mebibyte, on: 1)
        return table
    }

    private static func violationDetail(_ action: ChannelTable.Action) -> String? {
        guard case .violation(let error) = action else { return nil }
        return error.description
    }

    /// Sends `length` bytes of the current block in CHUNKs of at most 64 KiB; `true` if every one was taken.
    private static func sendChunks(_ length: Int, on channel: UInt32, into table: inout ChannelTable) -> Bool {
        var left = length
        while left > 0 {
            let count = min(left, WireProtocol.maximumChunkLength)
            let chunk = F.pattern(count: count)
            guard table.frameReceived(.chunk(channel: channel, chunk)) == .received(channel: channel, chunk) else {
                return false
            }
            left -= count
        }
        return true
    }

    @Test("a whole resource: blocks in any order, each BLOCK then exactly its bytes, then END with the root")
    func wholeResource() {
        var table = Self.tableWithResource()
        for index in [2, 0, 1] {
            #expect(
                table.frameReceived(.block(channel: 1, index: UInt32(index), digest: Self.digest(UInt8(index))))
                    == .block(channel: 1, index: index, digest: Self.digest(UInt8(index)))
            )
            #expect(Self.sendChunks(index == 2 ? 10 : Self.mebibyte, on: 1, into: &table))
        }
        // A block again (the receiver's copy is replaced): the table lets it through.
        #expect(table.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2))) != .none)
        #expect(Self.sendChunks(10, on: 1, into: &table))
        let root = [UInt8](repeating: 0xFF, count: WireProtocol.digestLength)
        #expect(table.frameReceived(.end(channel: 1, digest: root)) == .ended(channel: 1, digest: root))
        #expect(table.inboundCount == 0)
    }

    @Test("END between blocks passes even with blocks not sent: the receiver's ledger judges what is missing")
    func endWithBlocksMissing() {
        var table = Self.tableWithResource()
        _ = table.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))
        #expect(Self.sendChunks(10, on: 1, into: &table))
        let root = [UInt8](repeating: 0xFF, count: WireProtocol.digestLength)
        #expect(table.frameReceived(.end(channel: 1, digest: root)) == .ended(channel: 1, digest: root))
        // An empty resource has no block at all: END at once.
        var empty = Self.tableWithResource(size: 0)
        #expect(empty.frameReceived(.end(channel: 1, digest: root)) == .ended(channel: 1, digest: root))
    }

    @Test("a folder channel has a resource's blocks: BLOCK then its bytes, END only with a root, none past its size")
    func folderChannel() {
        var table = ChannelTable(localIsInviter: false, maximumIncomingChannels: 8)
        let open = Self.open(1, .folder)
        #expect(table.frameReceived(.open(open)) == .opened(open))
        _ = table.grant(4 * Self.mebibyte, on: 1)
        #expect(Self.violationDetail(table.frameReceived(.chunk(channel: 1, F.pattern(count: 10)))) != nil)
        #expect(table.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0))) != .none)
        #expect(Self.sendChunks(Self.mebibyte, on: 1, into: &table))
        #expect(
            Self.violationDetail(table.frameReceived(.block(channel: 1, index: 3, digest: Self.digest(3))))
                == "malformed BLOCK frame: block 3 of a resource of 3 blocks"
        )
        #expect(
            Self.violationDetail(table.frameReceived(.end(channel: 1, digest: nil)))
                == "malformed END frame: a folder's END has no digest"
        )
        let tooLarge = Self.open(3, .folder, size: UInt64.max)
        let reason = "a folder of \(UInt64.max) bytes; at most \(WireProtocol.maximumResourceBlocks) blocks"
        #expect(table.frameReceived(.open(tooLarge)) == .refuse(channel: 3, .tooLarge, reason: reason))
    }

    @Test("BLOCK only on a resource channel: on a stream or a message it breaks the protocol")
    func blockOnlyOnResources() {
        for kind in [ChannelKind.stream, .message] {
            var table = ChannelTable(localIsInviter: false, maximumIncomingChannels: 8)
            let open = Self.open(1, kind, size: kind == .stream ? 0 : 100)
            #expect(table.frameReceived(.open(open)) == .opened(open))
            #expect(
                Self.violationDetail(table.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0))))
                    == "malformed BLOCK frame: channel 1 is a \(kind), not a resource"
            )
        }
    }

    @Test(
        "BLOCK only from the resource's writer; on a channel never opened it breaks the protocol, after END it is dropped"
    )
    func blockDirection() {
        var table = Self.tableWithResource()
        #expect(
            Self.violationDetail(table.frameReceived(.block(channel: 2, index: 0, digest: Self.digest(0))))
                == "malformed BLOCK frame: channel 2 was opened by this side; only the opener sends BLOCK"
        )
        #expect(
            Self.violationDetail(table.frameReceived(.block(channel: 3, index: 0, digest: Self.digest(0))))
                == "malformed BLOCK frame: channel 3 was never opened"
        )
        #expect(table.reset(1, .blockMismatch) == .reset(channel: 1, .blockMismatch))
        // Blocks in flight while the RESET travels are dropped.
        #expect(table.frameReceived(.block(channel: 1, index: 1, digest: Self.digest(1))) == .none)
        #expect(table.frameReceived(.chunk(channel: 1, F.pattern(count: 100))) == .none)
    }

    @Test("a block index at or past the resource's block count breaks the protocol")
    func indexPastTheEnd() {
        var table = Self.tableWithResource()
        #expect(
            Self.violationDetail(table.frameReceived(.block(channel: 1, index: 3, digest: Self.digest(3))))
                == "malformed BLOCK frame: block 3 of a resource of 3 blocks"
        )
        var last = Self.tableWithResource()
        #expect(last.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2))) != .none)
        var empty = Self.tableWithResource(size: 0)
        #expect(
            Self.violationDetail(empty.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0))))
                == "malformed BLOCK frame: block 0 of a resource of 0 blocks"
        )
        var large = Self.tableWithResource()
        let index = UInt32(WireProtocol.maximumResourceBlocks - 1)
        #expect(
            Self.violationDetail(large.frameReceived(.block(channel: 1, index: index, digest: Self.digest(0)))) != nil
        )
    }

    @Test("a BLOCK before the last block is whole breaks the protocol; once it is whole the next may start")
    func blockBeforeLastIsWhole() {
        var table = Self.tableWithResource()
        _ = table.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))
        #expect(Self.sendChunks(4, on: 1, into: &table))
        var early = table
        #expect(
            Self.violationDetail(early.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0))))
                == "malformed BLOCK frame: block 0 begins 6 bytes short of the last one"
        )
        // The same block again before it is whole is no different.
        var again = table
        #expect(Self.violationDetail(again.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))) != nil)
        #expect(Self.sendChunks(6, on: 1, into: &table))
        #expect(
            table.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0)))
                == .block(channel: 1, index: 0, digest: Self.digest(0))
        )
    }

    @Test("a CHUNK outside a block breaks the protocol: before the first BLOCK, and after a block is whole")
    func chunkOutsideBlock() {
        var fresh = Self.tableWithResource()
        #expect(
            Self.violationDetail(fresh.frameReceived(.chunk(channel: 1, F.pattern(count: 1))))
                == "malformed CHUNK frame: 1 bytes on resource channel 1, 0 left of its block"
        )
        var table = Self.tableWithResource()
        _ = table.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))
        #expect(Self.sendChunks(10, on: 1, into: &table))
        #expect(
            Self.violationDetail(table.frameReceived(.chunk(channel: 1, F.pattern(count: 1))))
                == "malformed CHUNK frame: 1 bytes on resource channel 1, 0 left of its block"
        )
    }

    @Test("a CHUNK longer than the rest of its block breaks the protocol; exactly the rest does not")
    func chunkLongerThanBlock() {
        var table = Self.tableWithResource()
        _ = table.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))
        #expect(Self.sendChunks(3, on: 1, into: &table))
        var over = table
        #expect(
            Self.violationDetail(over.frameReceived(.chunk(channel: 1, F.pattern(count: 8))))
                == "malformed CHUNK frame: 8 bytes on resource channel 1, 7 left of its block"
        )
        #expect(Self.sendChunks(7, on: 1, into: &table))

        // A whole block: 16 chunks of 64 KiB fit, one byte more does not.
        var whole = Self.tableWithResource()
        _ = whole.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0)))
        #expect(Self.sendChunks(Self.mebibyte - 1, on: 1, into: &whole))
        #expect(
            Self.violationDetail(whole.frameReceived(.chunk(channel: 1, F.pattern(count: 2))))
                == "malformed CHUNK frame: 2 bytes on resource channel 1, 1 left of its block"
        )
    }

    @Test("the window still bounds a resource's chunks, inside a block")
    func windowWithinBlock() {
        var table = ChannelTable(localIsInviter: false, maximumIncomingChannels: 8)
        _ = table.frameReceived(.open(Self.open(1)))
        _ = table.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0)))
        #expect(Self.sendChunks(WireProtocol.initialChannelWindow, on: 1, into: &table))
        #expect(
            Self.violationDetail(table.frameReceived(.chunk(channel: 1, F.pattern(count: 1))))
                == "malformed CHUNK frame: 1 bytes on channel 1 exceed its window of 0"
        )
    }

    @Test("END in the middle of a block breaks the protocol")
    func endMidBlock() {
        var table = Self.tableWithResource()
        _ = table.frameReceived(.block(channel: 1, index: 0, digest: Self.digest(0)))
        #expect(Self.sendChunks(1000, on: 1, into: &table))
        #expect(
            Self.violationDetail(table.frameReceived(.end(channel: 1, digest: Self.digest(0xFF))))
                == "malformed END frame: resource channel 1 ended \(Self.mebibyte - 1000) bytes short of a block"
        )
        // Right after a BLOCK, before any of its bytes, too.
        var bare = Self.tableWithResource()
        _ = bare.frameReceived(.block(channel: 1, index: 2, digest: Self.digest(2)))
        #expect(Self.violationDetail(bare.frameReceived(.end(channel: 1, digest: Self.digest(0xFF)))) != nil)
    }

    @Test("HAVE comes only on channels this side opened, and goes to the writer as it came")
    func haveDirection() {
        var table = Self.tableWithResource()
        let have = Frame.Have(digest: Self.digest(7), bitmap: [0b101])
        #expect(table.frameReceived(.have(channel: 2, have)) == .have(channel: 2, have))
        #expect(table.frameReceived(.have(channel: 4, .nothing)) == .have(channel: 4, .nothing))
        #expect(
            Self.violationDetail(table.frameReceived(.have(channel: 1, have)))
                == "malformed HAVE frame: channel 1 was opened by the peer; only this side sends HAVE"
        )
        #expect(Self.violationDetail(table.frameReceived(.have(channel: 5, have))) != nil)
        // The inviter's table: the peer answers HAVE on odd channels.
        var inviter = ChannelTable(localIsInviter: true, maximumIncomingChannels: 8)
        #expect(inviter.frameReceived(.have(channel: 1, have)) == .have(channel: 1, have))
        #expect(Self.violationDetail(inviter.frameReceived(.have(channel: 2, have))) != nil)
    }

    @Test("HAVE holding nothing is 32 zero bytes and an empty bitmap")
    func haveNothing() {
        #expect(Frame.Have.nothing.digest == [UInt8](repeating: 0, count: 32))
        #expect(Frame.Have.nothing.bitmap.isEmpty)
    }

    @Test("a resource of more blocks than the protocol carries is refused at OPEN, too large, and its frames dropped")
    func tooManyBlocks() {
        let largest = UInt64(WireProtocol.maximumResourceBlocks) * UInt64(Self.mebibyte)
        var table = ChannelTable(localIsInviter: false, maximumIncomingChannels: 8)
        #expect(table.frameReceived(.open(Self.open(1, size: largest))) == .opened(Self.open(1, size: largest)))
        for (channel, size) in [(UInt32(3), largest + 1), (5, UInt64.max)] {
            let reason = "a resource of \(size) bytes; at most \(WireProtocol.maximumResourceBlocks) blocks"
            #expect(
                table.frameReceived(.open(Self.open(channel, size: size)))
                    == .refuse(channel: channel, .tooLarge, reason: reason)
            )
            #expect(table.frameReceived(.block(channel: channel, index: 0, digest: Self.digest(0))) == .none)
            #expect(table.frameReceived(.chunk(channel: channel, F.pattern(count: 10))) == .none)
        }
        #expect(table.inboundCount == 1)
        // The last block of the largest resource may start.
        let last = UInt32(WireProtocol.maximumResourceBlocks - 1)
        #expect(
            table.frameReceived(.block(channel: 1, index: last, digest: Self.digest(1)))
                == .block(channel: 1, index: Int(last), digest: Self.digest(1))
        )
    }

    @Test("RESET 9, block mismatch, reads back from the wire and names itself")
    func blockMismatchCode() {
        #expect(ChannelResetCode(wireValue: 9) == .blockMismatch)
        #expect(ChannelResetCode.blockMismatch.rawValue == 9)
        #expect(ChannelResetCode.blockMismatch.description == "block mismatch")
        #expect(ChannelResetCode(wireValue: 10) == .failed)
        var table = Self.tableWithResource()
        #expect(table.frameReceived(.reset(channel: 2, .blockMismatch)) == .reset(channel: 2, .blockMismatch))
    }
}
