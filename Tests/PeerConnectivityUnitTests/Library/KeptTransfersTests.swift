import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Files and folders cut short, kept in one store: each is claimed by its own key, from memory and from
/// disk after a restart; the byte limit counts both; a folder's record that names paths outside its
/// directory touches nothing there. Driven through the writers, on real directories, without a
/// connection.
@Suite("Kept transfers: files and folders in one store")
struct KeptTransfersTests {
    private static let peer = try! PeerID(displayName: "sender")
    private static let limits = PartialResourceStore.Limits(lifetime: 3600, maximumBytes: 1 << 40)
    private static let block = WireProtocol.resourceBlockLength
    private static let name = Array("same".utf8)

    /// A folder stream of two files, about two and a half blocks: one file crosses the first block's end.
    private static let files: [(path: String, bytes: [UInt8])] = [
        ("a.txt", (0..<(3 * block / 2)).map { UInt8(truncatingIfNeeded: $0 &* 13) }),
        ("sub/b.txt", (0..<block).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }),
    ]
    private static let stream: [UInt8] = files.flatMap { file in
        FolderStream.header(path: Array(file.path.utf8), length: UInt64(file.bytes.count)) + file.bytes
    }
    private static let layout = ResourceLayout(size: UInt64(stream.count))

    private static func blockBytes(_ index: Int) -> ArraySlice<UInt8> {
        stream[(index * block)..<min(stream.count, (index + 1) * block)]
    }

    private static func digest(_ index: Int, _ kind: BlockDigestKind = .xxh3) -> [UInt8] {
        ResourceFileIO.blockDigest(ByteBuffer(bytes: blockBytes(index)), kind)
    }

    private static var root: [UInt8] {
        ResourceFileIO.digest(of: layout.rootInput(digests: (0..<layout.blockCount).map { digest($0) }))
    }

    private static func folderWriter(
        in directory: URL,
        limits: PartialResourceStore.Limits = limits,
        kind: BlockDigestKind = .xxh3
    ) -> FolderWriter {
        FolderWriter(
            open: Frame.Open(channel: 5, kind: .folder, size: UInt64(stream.count), name: name),
            peer: peer,
            directoryPath: directory.path,
            maximumEntries: 100,
            digestKind: kind,
            limits: limits
        )
    }

    /// A file of the folder stream's length and name: the same key but for its kind.
    private static func fileWriter(
        in directory: URL,
        limits: PartialResourceStore.Limits = limits,
        kind: BlockDigestKind = .xxh3
    ) -> FileWriter {
        FileWriter(
            open: Frame.Open(channel: 7, kind: .resource, size: UInt64(stream.count), name: name),
            peer: peer,
            directory: directory,
            digestKind: kind,
            limits: limits
        )
    }

    /// Sends block `index` of the stream (BLOCK, then its chunks), with its digest of `kind`.
    private static func send(_ index: Int, to writer: inout some BlockWriter, kind: BlockDigestKind = .xxh3) throws {
        _ = try writer.blockStarted(index, digest: digest(index, kind))
        let bytes = blockBytes(index)
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let end = min(bytes.endIndex, offset + WireProtocol.maximumChunkLength)
            _ = try writer.received(ByteBuffer(bytes: bytes[offset..<end]))
            offset = end
        }
    }

    @Test("a folder and a file of one name and length are each claimed by their own key, after a restart too")
    func ownKeys() throws {
        let scratch = try ScratchDirectory("kept-keys")
        defer { scratch.remove() }
        var folder = Self.folderWriter(in: scratch.url)
        _ = folder.open()
        try Self.send(0, to: &folder)
        folder.finish(keep: true)
        var file = Self.fileWriter(in: scratch.url)
        _ = try file.open()
        try Self.send(0, to: &file)
        try Self.send(2, to: &file)
        file.finish(keep: true)
        let kept = try scratch.contents()
        #expect(kept.filter { $0.hasSuffix(".folder") }.count == 1)
        #expect(kept.filter { $0.hasSuffix(".resume") }.count == 1)
        #expect(kept.filter { $0.hasSuffix(".d") }.count == 1)

        // A new process knows nothing but what is on disk.
        PartialResourceStore.shared.forget(scratch.url.path)
        var resumedFile = Self.fileWriter(in: scratch.url)
        let (fileHave, fileResumed) = try resumedFile.open()
        #expect(fileResumed == Self.layout.bytes(in: [0, 2]))
        #expect(fileHave.bitmap == Self.layout.bitmap(of: [0, 2]))
        var resumedFolder = Self.folderWriter(in: scratch.url)
        let (folderHave, folderResumed) = resumedFolder.open()
        #expect(folderResumed == UInt64(Self.block))
        #expect(folderHave.bitmap == Self.layout.bitmap(of: [0]))

        try Self.send(1, to: &resumedFolder)
        try Self.send(2, to: &resumedFolder)
        let url = try resumedFolder.ended(root: Self.root)
        resumedFolder.finish(keep: false)
        for (path, bytes) in Self.files {
            #expect(try Data(contentsOf: url.appendingPathComponent(path)) == Data(bytes))
        }
        try Self.send(1, to: &resumedFile)
        let fileURL = try resumedFile.ended(root: Self.root)
        resumedFile.finish(keep: false)
        #expect(try Data(contentsOf: fileURL) == Data(Self.stream))
        let left = try scratch.contents()
        #expect(left == ["same", "same (2)"], "no partial file, record or staging directory is left: \(left)")
    }

    @Test(
        "kept under XXH64 and taken up on an XXH3-64 link: the file's blocks are hashed again and offered, the folder starts again"
    )
    func keptAcrossDigestKinds() throws {
        let scratch = try ScratchDirectory("kept-kinds")
        defer { scratch.remove() }
        var folder = Self.folderWriter(in: scratch.url, kind: .xxh64)
        _ = folder.open()
        try Self.send(0, to: &folder, kind: .xxh64)
        folder.finish(keep: true)
        var file = Self.fileWriter(in: scratch.url, kind: .xxh64)
        _ = try file.open()
        try Self.send(0, to: &file, kind: .xxh64)
        try Self.send(2, to: &file, kind: .xxh64)
        file.finish(keep: true)

        // This process kept the file's XXH64 digests in memory: a link of the other kind does not trust them.
        var resumedFile = Self.fileWriter(in: scratch.url, kind: .xxh3)
        let (fileHave, fileResumed) = try resumedFile.open()
        #expect(fileResumed == Self.layout.bytes(in: [0, 2]))
        #expect(fileHave.bitmap == Self.layout.bitmap(of: [0, 2]))
        #expect(fileHave.digest == ResourceFileIO.heldDigest([Self.digest(0), Self.digest(2)]), "XXH3-64 digests")
        try Self.send(1, to: &resumedFile)
        let fileURL = try resumedFile.ended(root: Self.root)
        resumedFile.finish(keep: false)
        #expect(try Data(contentsOf: fileURL) == Data(Self.stream))

        var resumedFolder = Self.folderWriter(in: scratch.url, kind: .xxh3)
        let (folderHave, folderResumed) = resumedFolder.open()
        #expect(folderHave == .nothing, "the folder's blocks are in its files: they cannot be hashed again")
        #expect(folderResumed == 0)
        for index in 0..<Self.layout.blockCount { try Self.send(index, to: &resumedFolder) }
        let url = try resumedFolder.ended(root: Self.root)
        resumedFolder.finish(keep: false)
        for (path, bytes) in Self.files {
            #expect(try Data(contentsOf: url.appendingPathComponent(path)) == Data(bytes))
        }
        let left = try scratch.contents()
        #expect(left == ["same", "same (2)"], "the kept folder's record and staging directory are gone: \(left)")
    }

    @Test("past the byte limit the oldest goes, file or folder: a folder with its staging directory and file")
    func limitCountsBoth() throws {
        let scratch = try ScratchDirectory("kept-limit")
        defer { scratch.remove() }
        // Room for one block: the second transfer kept pushes out the first.
        let small = PartialResourceStore.Limits(lifetime: 3600, maximumBytes: UInt64(Self.block + Self.block / 2))
        var folder = Self.folderWriter(in: scratch.url, limits: small)
        _ = folder.open()
        try Self.send(0, to: &folder)
        folder.finish(keep: true)
        #expect(try scratch.contents().count == 3, "the folder's partial file, staging directory and record")

        var file = Self.fileWriter(in: scratch.url, limits: small)
        _ = try file.open()
        try Self.send(1, to: &file)
        file.finish(keep: true)
        let left = try scratch.contents()
        #expect(left.count == 2, "only the file's partial file and record: \(left)")
        #expect(left.contains { $0.hasSuffix(".resume") })

        var again = Self.folderWriter(in: scratch.url, limits: small)
        #expect(again.open().resumed == 0)
        again.finish(keep: false)
    }

    @Test("a folder's record naming paths outside its directory is removed, and nothing there is touched")
    func hostileFolderRecord() throws {
        let scratch = try ScratchDirectory("kept-hostile")
        defer { scratch.remove() }
        let outside = scratch.url.appendingPathComponent("outside")
        let received = scratch.url.appendingPathComponent("received")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: outside.appendingPathComponent(".partial-x"))
        var folder = Self.folderWriter(in: received)
        _ = folder.open()
        try Self.send(0, to: &folder)
        var record = folder.record(peer: Self.peer.id)
        folder.finish(keep: false)
        record.stagingPath = outside.path
        record.file?.partialPath = outside.appendingPathComponent(".partial-x").path
        try JSONEncoder().encode(record).write(to: received.appendingPathComponent(".partial-evil.folder"))

        PartialResourceStore.shared.forget(received.path)
        var resumed = Self.folderWriter(in: received)
        #expect(resumed.open().resumed == 0)
        resumed.finish(keep: false)
        #expect(try scratch.contents("received").isEmpty, "the record is gone")
        #expect(try scratch.contents("outside") == [".partial-x"], "what it named outside is untouched")
    }
}
