import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A folder received whole is placed whole or not at all: hand-written hostile peers over loopback cut,
/// reset, damage and misname folder streams, and the receive directory holds nothing afterwards but
/// what a resume keeps (hidden `.partial-` entries), or nothing at all when nothing is kept.
@Suite("Folders: staged, placed whole or not at all", .timeLimit(.minutes(1 * slowdown)))
struct FolderStagingTests {
    /// A session receiving into `scratch/received`, joined by a hand-written peer.
    private func joined(
        _ name: String,
        into scratch: ScratchDirectory,
        keeps: Bool = true,
        maximumEntries: Int? = nil
    ) async throws -> (RawJoinedSession, URL) {
        var configuration = Session.Configuration.patient
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        configuration.resourceDirectory = directory
        if !keeps { configuration.partialResourceLifetime = .zero }
        if let maximumEntries { configuration.maximumFolderEntries = maximumEntries }
        return (try await RawJoinedSession(name, configuration: configuration), directory)
    }

    /// A folder stream of two blocks: a file of 1.5 MiB, then a small one.
    private static let twoBlocks = HandFrames.folderStream([
        (Array("big.bin".utf8), [UInt8](repeating: 0x5A, count: 3 << 19)),
        (Array("small.txt".utf8), Array("small".utf8)),
    ])

    /// BLOCK 0 of `stream` on `channel` and all its CHUNKs: the first block, whole and right.
    private static func firstBlock(of stream: [UInt8], channel: UInt32) -> [UInt8] {
        let block = Array(stream.prefix(1 << 20))
        var frames = HandFrames.block(channel: channel, index: 0, digest: HandFrames.blockDigest(block))
        for start in stride(from: 0, to: block.count, by: 1 << 16) {
            frames += HandFrames.chunk(channel: channel, Array(block[start..<min(start + (1 << 16), block.count)]))
        }
        return frames
    }

    /// Opens a folder of `size` bytes on `channel` as a writer must: then awaits HAVE and, for a stream past
    /// the first window, the CREDIT that widens it, so that what follows stays within the window.
    private static func open(_ name: String, size: Int, channel: UInt32, on joined: RawJoinedSession) async {
        joined.socket.send(HandFrames.openFolder(channel: channel, size: UInt64(size), name: Array(name.utf8)))
        #expect(await joined.socket.readFrame(ofType: 0x27) != nil, "HAVE")
        if size > 256 << 10 { #expect(await joined.socket.readFrame(ofType: 0x24) != nil, "CREDIT") }
    }

    /// Sends a good folder on the same connection and checks it lands: the connection still works.
    private func sendsAnother(over joined: RawJoinedSession, channel: UInt32, into directory: URL, count: Int)
        async throws
    {
        let stream = HandFrames.folderStream([(Array("ok.txt".utf8), Array("ok".utf8))])
        joined.socket.send(
            HandFrames.openFolder(channel: channel, size: UInt64(stream.count), name: Array("after".utf8))
                + HandFrames.resource(channel: channel, stream)
        )
        let finished = try await joined.log.waitForResources(count)
        #expect(try finished[count - 1].result.get().path == directory.path + "/after")
        #expect(try folderFiles(in: directory.appendingPathComponent("after")) == ["ok.txt": Data("ok".utf8)])
    }

    @Test("a stream cut after a block keeps only what a resume needs, hidden; with nothing kept, nothing is left")
    func cutStream() async throws {
        for keeps in [true, false] {
            let scratch = try ScratchDirectory("folder-staging-cut")
            defer { scratch.remove() }
            let (joined, directory) = try await joined("folder-staging-cut", into: scratch, keeps: keeps)
            await Self.open("cut", size: Self.twoBlocks.count, channel: 1, on: joined)
            joined.socket.send(Self.firstBlock(of: Self.twoBlocks, channel: 1))
            // Cut once the first block is written (the receiver's progress counts blocks checked and written).
            try await waitFor(try #require(await joined.log.waitForStartedResources(1).first), fraction: 0.6)
            shutdown(joined.socket.fd, Int32(SHUT_RDWR))
            let finished = try await joined.log.waitForResources(1)
            #expect(throws: TransferError.self) { try finished[0].result.get() }
            let left = receiveDirectoryEntries(directory)
            if keeps {
                #expect(left.allSatisfy { $0.hasPrefix(".partial-") }, "only what a resume keeps: \(left)")
                #expect(left.contains { $0.hasSuffix(".d") } && left.contains { $0.hasSuffix(".folder") }, "\(left)")
            } else {
                #expect(left.isEmpty, "\(left)")
            }
            await joined.stop()
        }
    }

    @Test("a stream the sender resets (cancelled) after a block leaves nothing; the connection goes on")
    func resetBySender() async throws {
        let scratch = try ScratchDirectory("folder-staging-reset")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-reset", into: scratch)
        await Self.open("reset", size: Self.twoBlocks.count, channel: 1, on: joined)
        joined.socket.send(Self.firstBlock(of: Self.twoBlocks, channel: 1))
        try await waitFor(try #require(await joined.log.waitForStartedResources(1).first), fraction: 0.6)
        joined.socket.send(HandFrames.frame(type: 0x23, body: HandFrames.bigEndian(UInt32(1)) + [1]))
        let finished = try await joined.log.waitForResources(1)
        #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(receiveDirectoryEntries(directory).isEmpty, "\(receiveDirectoryEntries(directory))")
        try await sendsAnother(over: joined, channel: 3, into: directory, count: 2)
        #expect(receiveDirectoryEntries(directory) == ["after"])
        await joined.stop()
    }

    @Test("a stream the receiver refuses midway (a path too deep) leaves nothing of what it staged")
    func refusedByReceiver() async throws {
        let scratch = try ScratchDirectory("folder-staging-refused")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-refused", into: scratch)
        let deep = Array(Array(repeating: "d", count: 40).joined(separator: "/").utf8)
        let stream = HandFrames.folderStream([(Array("first.txt".utf8), [1, 2, 3]), (deep, [4])])
        joined.socket.send(
            HandFrames.openFolder(channel: 1, size: UInt64(stream.count), name: Array("deep".utf8))
                + HandFrames.resource(channel: 1, stream)
        )
        let finished = try await joined.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error?.detail?.contains("components") == true, "\(String(describing: error))")
        #expect(receiveDirectoryEntries(directory).isEmpty, "\(receiveDirectoryEntries(directory))")
        try await sendsAnother(over: joined, channel: 3, into: directory, count: 2)
        await joined.stop()
    }

    @Test("a root that does not match at END leaves nothing of the folder, though every block held")
    func rootMismatch() async throws {
        let scratch = try ScratchDirectory("folder-staging-root")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-root", into: scratch)
        await Self.open("root", size: Self.twoBlocks.count, channel: 1, on: joined)
        joined.socket.send(HandFrames.resource(channel: 1, Self.twoBlocks, root: [UInt8](repeating: 1, count: 32)))
        let finished = try await joined.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error == TransferError.digestMismatch(peer: error?.peer, name: "root"), "\(String(describing: error))")
        #expect(receiveDirectoryEntries(directory).isEmpty, "\(receiveDirectoryEntries(directory))")
        try await sendsAnother(over: joined, channel: 3, into: directory, count: 2)
        await joined.stop()
    }

    @Test("a second block whose digest does not match leaves only what a resume keeps, hidden")
    func blockMismatch() async throws {
        let scratch = try ScratchDirectory("folder-staging-block")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-block", into: scratch)
        let second = Array(Self.twoBlocks.dropFirst(1 << 20))
        await Self.open("block", size: Self.twoBlocks.count, channel: 1, on: joined)
        joined.socket.send(
            Self.firstBlock(of: Self.twoBlocks, channel: 1)
                + HandFrames.block(channel: 1, index: 1, digest: [UInt8](repeating: 9, count: 8))
                + stride(from: 0, to: second.count, by: 1 << 16).flatMap { start in
                    HandFrames.chunk(channel: 1, Array(second[start..<min(start + (1 << 16), second.count)]))
                }
        )
        let finished = try await joined.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error == TransferError.digestMismatch(peer: error?.peer, name: "block"), "\(String(describing: error))")
        let left = receiveDirectoryEntries(directory)
        #expect(left.allSatisfy { $0.hasPrefix(".partial-") } && !left.isEmpty, "only what a resume keeps: \(left)")
        await joined.stop()
    }

    /// An empty name is no OPEN the protocol carries (a name is 1-16,384 bytes); it is placed as these are
    /// (`FolderPlacementTests`).
    @Test("a folder named '..', '/' or '.' lands in a folder of its own inside the receive directory")
    func namesThatMakeNoPath() async throws {
        let scratch = try ScratchDirectory("folder-staging-names")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-names", into: scratch)
        let names = ["..", "/", "."]
        for (index, name) in names.enumerated() {
            let stream = HandFrames.folderStream([(Array("file.txt".utf8), Array("file \(index)".utf8))])
            let channel = UInt32(2 * index + 1)
            joined.socket.send(
                HandFrames.openFolder(channel: channel, size: UInt64(stream.count), name: Array(name.utf8))
                    + HandFrames.resource(channel: channel, stream)
            )
            // One at a time, so that each takes the next free name.
            _ = try await joined.log.waitForResources(index + 1)
        }
        let finished = try await joined.log.waitForResources(names.count)
        let expected = ["resource", "resource (2)", "resource (3)"]
        #expect(try finished.map { try $0.result.get().path } == expected.map { directory.path + "/" + $0 })
        #expect(receiveDirectoryEntries(directory) == expected)
        for (index, folder) in expected.enumerated() {
            let files = try folderFiles(in: directory.appendingPathComponent(folder))
            #expect(files == ["file.txt": Data("file \(index)".utf8)], "\(folder)")
        }
        #expect(try scratch.contents() == ["received"], "nothing beside the receive directory")
        await joined.stop()
    }

    @Test("a folder with more entries than the receiver takes is refused at the first over; nothing is left")
    func tooManyEntries() async throws {
        let scratch = try ScratchDirectory("folder-staging-entries")
        defer { scratch.remove() }
        let (joined, directory) = try await joined("folder-staging-entries", into: scratch, maximumEntries: 10)
        let stream = HandFrames.folderStream((0..<11).map { (Array("dup.txt".utf8), [UInt8($0)]) })
        joined.socket.send(
            HandFrames.openFolder(channel: 1, size: UInt64(stream.count), name: Array("many".utf8))
                + HandFrames.resource(channel: 1, stream)
        )
        // The sender is told "too large" (RESET 6), a refusal, not a fault of its own.
        let reset = await joined.socket.readFrame(ofType: 0x23)
        #expect(reset == HandFrames.bigEndian(UInt32(1)) + [6], "\(String(describing: reset))")
        let finished = try await joined.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error == TransferError.refused(peer: error?.peer, name: "many"), "\(String(describing: error))")
        #expect(error?.detail?.contains("more than 10 entries") == true, "\(String(describing: error))")
        #expect(receiveDirectoryEntries(directory).isEmpty, "\(receiveDirectoryEntries(directory))")
        try await sendsAnother(over: joined, channel: 3, into: directory, count: 2)
        await joined.stop()
    }
}
