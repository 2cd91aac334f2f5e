import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// The writer of a received file, driven as its receiver drives it, on a real directory and without
/// a connection: blocks in any order, what a damaged block keeps for a resume, a block that crosses
/// again, and a root that does not hold.
@Suite("File writer")
struct FileWriterTests {
    private static let peer = try! PeerID(displayName: "sender")
    private static let limits = PartialResourceStore.Limits(lifetime: 3600, maximumBytes: 1 << 40)
    private static let block = WireProtocol.resourceBlockLength
    private static let chunk = WireProtocol.maximumChunkLength

    /// Two and a half blocks of bytes that differ from block to block.
    private static let bytes: [UInt8] = (0..<(5 * block / 2)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 20) }
    private static let layout = ResourceLayout(size: UInt64(bytes.count))

    private static func blockBytes(_ index: Int) -> ArraySlice<UInt8> {
        let start = index * block
        return bytes[start..<min(bytes.count, start + block)]
    }

    private static func digest(_ index: Int) -> [UInt8] {
        ResourceFileIO.blockDigest(ByteBuffer(bytes: blockBytes(index)), .xxh3)
    }

    private static var root: [UInt8] {
        ResourceFileIO.digest(of: layout.rootInput(digests: (0..<layout.blockCount).map(digest)))
    }

    private static func writer(in directory: URL, store: PartialResourceStore) -> FileWriter {
        let open = Frame.Open(channel: 3, kind: .resource, size: UInt64(bytes.count), name: Array("a.bin".utf8))
        return FileWriter(open: open, peer: peer, directory: directory, digestKind: .xxh3, limits: limits, store: store)
    }

    /// Sends block `index` (BLOCK, then its chunks, as the channel does); what the last chunk returned.
    @discardableResult
    private static func send(
        _ index: Int,
        to writer: inout FileWriter,
        flip: Bool = false
    ) throws(BlockWriteFailure) -> (progressed: Int, checked: Int) {
        _ = try writer.blockStarted(index, digest: digest(index))
        return try feed(index, to: &writer, flip: flip)
    }

    /// Sends the chunks of block `index`, started already.
    @discardableResult
    private static func feed(
        _ index: Int,
        to writer: inout FileWriter,
        flip: Bool = false
    ) throws(BlockWriteFailure) -> (progressed: Int, checked: Int) {
        var payload = Array(blockBytes(index))
        if flip { payload[payload.count / 2] ^= 0x10 }
        var last = (progressed: 0, checked: 0)
        var offset = 0
        while offset < payload.count {
            let end = min(payload.count, offset + chunk)
            last = try writer.received(ByteBuffer(bytes: payload[offset..<end]))
            if end < payload.count { #expect(last == (end - offset, 0)) }
            offset = end
        }
        return last
    }

    /// Runs `body`, which must fail with `code`, keeping the blocks checked or not as `keep` says.
    private static func expectFailure(
        _ code: ChannelResetCode,
        keep: Bool,
        _ body: () throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try body()
            Issue.record("no failure where \(code) was due", sourceLocation: sourceLocation)
        } catch {
            let failure = error as? BlockWriteFailure
            #expect(failure?.code == code, sourceLocation: sourceLocation)
            #expect(failure?.keep == keep, sourceLocation: sourceLocation)
        }
    }

    @Test("blocks in any order make the file; each block's credit comes back with its last chunk")
    func wholeOutOfOrder() throws {
        let scratch = try ScratchDirectory("file-writer-whole")
        defer { scratch.remove() }
        var writer = Self.writer(in: scratch.url, store: PartialResourceStore())
        let (have, resumed) = try writer.open()
        #expect(have == .nothing)
        #expect(resumed == 0)
        for index in [2, 0, 1] {
            let last = try Self.send(index, to: &writer)
            #expect(last.checked == Self.layout.length(of: index))
        }
        let url = try writer.ended(root: Self.root)
        writer.finish(keep: false)
        #expect(url.lastPathComponent == "a.bin")
        #expect(try Data(contentsOf: url) == Data(Self.bytes))
        #expect(try scratch.contents() == ["a.bin"])
    }

    @Test("a damaged block fails keeping the blocks checked; the next writer offers them and is whole")
    func damagedKeepsChecked() throws {
        let scratch = try ScratchDirectory("file-writer-damaged")
        defer { scratch.remove() }
        let store = PartialResourceStore()
        var first = Self.writer(in: scratch.url, store: store)
        _ = try first.open()
        try Self.send(0, to: &first)
        Self.expectFailure(.blockMismatch, keep: true) { try Self.send(1, to: &first, flip: true) }
        first.finish(keep: true)

        var second = Self.writer(in: scratch.url, store: store)
        let (have, resumed) = try second.open()
        #expect(resumed == UInt64(Self.block))
        #expect(have.bitmap == Self.layout.bitmap(of: [0]))
        #expect(have.digest == ResourceFileIO.heldDigest([Self.digest(0)]))
        try Self.send(1, to: &second)
        try Self.send(2, to: &second)
        let url = try second.ended(root: Self.root)
        second.finish(keep: false)
        #expect(try Data(contentsOf: url) == Data(Self.bytes))
        #expect(try scratch.contents() == ["a.bin"])
    }

    @Test("a held block that crosses again is counted again, and held again once checked")
    func blockAgain() throws {
        let scratch = try ScratchDirectory("file-writer-again")
        defer { scratch.remove() }
        let store = PartialResourceStore()
        var first = Self.writer(in: scratch.url, store: store)
        _ = try first.open()
        try Self.send(0, to: &first)
        first.finish(keep: true)

        var second = Self.writer(in: scratch.url, store: store)
        _ = try second.open()
        #expect(try second.blockStarted(0, digest: Self.digest(0)) == UInt64(Self.block))
        #expect(try Self.feed(0, to: &second).checked == Self.block)
        #expect(try second.blockStarted(1, digest: Self.digest(1)) == 0)
        try Self.feed(1, to: &second)
        second.finish(keep: true)

        var third = Self.writer(in: scratch.url, store: store)
        let (have, resumed) = try third.open()
        #expect(resumed == UInt64(2 * Self.block))
        #expect(have.bitmap == Self.layout.bitmap(of: [0, 1]))
        third.finish(keep: false)
        #expect(try scratch.contents().isEmpty)
    }

    @Test("a root that does not hold fails keeping nothing; a missing block fails at END")
    func rootAndMissing() throws {
        let scratch = try ScratchDirectory("file-writer-root")
        defer { scratch.remove() }
        var writer = Self.writer(in: scratch.url, store: PartialResourceStore())
        _ = try writer.open()
        try Self.send(0, to: &writer)
        try Self.send(1, to: &writer)
        Self.expectFailure(.sizeMismatch, keep: false) { _ = try writer.ended(root: Self.root) }
        try Self.send(2, to: &writer)
        var wrongRoot = Self.root
        wrongRoot[0] ^= 1
        Self.expectFailure(.digestMismatch, keep: false) { _ = try writer.ended(root: wrongRoot) }
        writer.finish(keep: false)
        #expect(try scratch.contents().isEmpty)
    }
}
