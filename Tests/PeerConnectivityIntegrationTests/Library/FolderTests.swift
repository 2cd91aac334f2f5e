import Crypto
import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Folders sent with `sendResource(at:withName:toPeer:)` between two sessions over real loopback sockets.
@Suite("Folders", .timeLimit(.minutes(1 * slowdown)))
struct FolderTests {
    /// A pair whose host receives into `scratch/received`.
    private func pair(
        receiveInto scratch: ScratchDirectory,
        window: Int? = nil,
        atOnce: Int? = nil,
        whole: Bool = true
    ) async throws -> SessionPair {
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = scratch.url.appendingPathComponent("received", isDirectory: true)
        if let window { configuration.resourceWindow = window }
        if let atOnce { configuration.maximumIncomingResources = atOnce }
        var client = Session.Configuration.patient
        client.sendsFoldersWhole = whole
        return try await SessionPair.connect(host: configuration, client: client)
    }

    /// A tree of nested folders, an empty file, a large file and non-ASCII names.
    private func nestedTree() -> [String: Data] {
        var tree: [String: Data] = ["top.txt": Data("top".utf8), "empty": Data()]
        for index in 0..<40 {
            tree["a/b\(index % 3)/c/file-\(index).bin"] = pattern(count: 1000 * index + 1, seed: UInt64(index))
        }
        tree["a/large.bin"] = pattern(count: 3 << 20, seed: 99)
        tree["日本/名前.txt"] = Data("unicode".utf8)
        return tree
    }

    @Test("a folder with nested subfolders arrives whole, byte for byte: one resource, with progress over the tree")
    func nestedTreeWhole() async throws {
        let scratch = try ScratchDirectory("folder")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let tree = nestedTree()
        try writeFolder(tree, in: source)

        let transfer = try pair.client.sendResource(at: source, withName: "album", toPeer: pair.host.peer)
        #expect(transfer.progress.totalUnitCount == folderStreamLength(tree))
        try await transfer.wait()
        #expect(transfer.progress.completedUnitCount == folderStreamLength(tree))

        let finished = try await pair.hostLog.waitForResources(1)
        let received = scratch.url.appendingPathComponent("received/album", isDirectory: true)
        #expect(finished.map(\.name) == ["album"])
        #expect(try finished[0].result.get().path == received.path)
        #expect(pair.hostLog.startedResources.map(\.progress.completedUnitCount) == [folderStreamLength(tree)])
        #expect(try folderFiles(in: received) == tree)
        #expect(try scratch.contents("received") == ["album"], "no partial file is left")
        #expect(transfer.statistics.blocks == 4, "3 MiB of one file and the rest: 4 blocks of the stream")
    }

    @Test("to a receiver that takes it, or with whole folders off, each file is a resource of its own")
    func nestedTreePerFile() async throws {
        let scratch = try ScratchDirectory("folder-per-file")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch, whole: false)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let tree = nestedTree()
        try writeFolder(tree, in: source)
        let total = tree.values.reduce(0) { $0 + $1.count }

        let transfer = try pair.client.sendResource(at: source, withName: "album", toPeer: pair.host.peer)
        #expect(transfer.progress.totalUnitCount == Int64(total))
        try await transfer.wait()
        #expect(transfer.progress.completedUnitCount == Int64(total))
        #expect(transfer.progress.fractionCompleted == 1)

        let finished = try await pair.hostLog.waitForResources(tree.count)
        #expect(Set(finished.map(\.name)) == Set(tree.keys.map { "album/\($0)" }))
        let received = scratch.url.appendingPathComponent("received/album", isDirectory: true)
        #expect(try folderFiles(in: received) == tree)
        #expect(try scratch.contents("received") == ["album"], "no partial file is left")
        for (name, result) in finished {
            #expect(try result.get().path == received.deletingLastPathComponent().path + "/" + name)
        }
    }

    @Test("a folder of 1,000 small files arrives whole; its progress ends at its stream's length")
    func manySmallFiles() async throws {
        let scratch = try ScratchDirectory("folder-many")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let tree = Dictionary(
            uniqueKeysWithValues: (0..<1000).map {
                ("d\($0 % 10)/f\($0)", pattern(count: 1 + $0 % 300, seed: UInt64($0)))
            }
        )
        try writeFolder(tree, in: source)
        let total = tree.values.reduce(0) { $0 + $1.count }
        let transfer = try pair.client.sendResource(at: source, withName: "many", toPeer: pair.host.peer)
        try await transfer.wait()
        #expect(transfer.progress.completedUnitCount == folderStreamLength(tree))
        #expect(folderStreamLength(tree) > Int64(total))
        #expect(try await pair.hostLog.waitForResources(1).allSatisfy { (try? $0.result.get()) != nil })
        #expect(try folderFiles(in: scratch.url.appendingPathComponent("received/many")) == tree)
    }

    @Test("a receiver taking 3 resources at once, fewer than a folder sends, refuses the others as busy; all arrive")
    func busyReceiver() async throws {
        let scratch = try ScratchDirectory("folder-busy")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch, atOnce: 3, whole: false)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        var tree = Dictionary(
            uniqueKeysWithValues: (0..<60).map { ("small/f\($0)", pattern(count: 1 + 97 * $0, seed: UInt64($0))) }
        )
        for index in 0..<3 { tree["large/f\(index)"] = pattern(count: (4 << 20) + index, seed: 50 + UInt64(index)) }
        try writeFolder(tree, in: source)
        let transfer = try pair.client.sendResource(at: source, withName: "busy", toPeer: pair.host.peer)
        let log = pair.hostLog
        try await transfer.wait(within: .seconds(40) * slowdown) {
            "the receiver started \(log.startedResources.count) files and finished \(log.finishedResources.count)"
        }
        #expect(transfer.progress.completedUnitCount == Int64(tree.values.reduce(0) { $0 + $1.count }))
        let finished = try await pair.hostLog.waitForResources(tree.count)
        #expect(finished.allSatisfy { (try? $0.result.get()) != nil }, "busy refusals end in no receive event")
        #expect(try folderFiles(in: scratch.url.appendingPathComponent("received/busy")) == tree)
    }

    @Test("symbolic links inside the sent folder are not sent, neither to a file nor to a folder outside it")
    func linksNotSent() async throws {
        let scratch = try ScratchDirectory("folder-links")
        defer { scratch.remove() }
        let outside = try ScratchDirectory("folder-links-outside")
        defer { outside.remove() }
        let secret = Data("secret outside the folder".utf8)
        try writeFolder(["secret.txt": secret, "inner/also-secret.txt": secret], in: outside.url)
        let pair = try await pair(receiveInto: scratch)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(["kept.txt": Data("kept".utf8), "sub/kept-too.txt": Data("too".utf8)], in: source)
        try FileManager.default.createSymbolicLink(
            at: source.appendingPathComponent("link-to-file"),
            withDestinationURL: outside.url.appendingPathComponent("secret.txt")
        )
        try FileManager.default.createSymbolicLink(
            at: source.appendingPathComponent("sub/link-to-folder"),
            withDestinationURL: outside.url.appendingPathComponent("inner")
        )

        let transfer = try pair.client.sendResource(at: source, withName: "docs", toPeer: pair.host.peer)
        try await transfer.wait()
        _ = try await pair.hostLog.waitForResources(1)
        #expect(
            transfer.progress.totalUnitCount
                == folderStreamLength(["kept.txt": Data("kept".utf8), "sub/kept-too.txt": Data("too".utf8)]),
            "only the two regular files were sent"
        )
        let received = try folderFiles(in: scratch.url.appendingPathComponent("received/docs"))
        #expect(received == ["kept.txt": Data("kept".utf8), "sub/kept-too.txt": Data("too".utf8)])
        #expect(!received.values.contains(secret))
    }

    @Test("a symbolic link planted in the receiver's directory is not followed when a folder of its name arrives")
    func plantedLinkAtReceiver() async throws {
        let scratch = try ScratchDirectory("folder-planted")
        defer { scratch.remove() }
        let outside = try ScratchDirectory("outside")
        defer { outside.remove() }
        let pair = try await pair(receiveInto: scratch)
        let received = scratch.url.appendingPathComponent("received", isDirectory: true)
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: received.appendingPathComponent("photos"),
            withDestinationURL: outside.url
        )
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let tree = ["a.jpg": Data("a".utf8), "2026/b.jpg": Data("b".utf8)]
        try writeFolder(tree, in: source)

        try await pair.client.sendResource(at: source, withName: "photos", toPeer: pair.host.peer).wait()
        let finished = try await pair.hostLog.waitForResources(1)
        #expect(try outside.contents().isEmpty, "nothing was written through the link")
        #expect(try folderFiles(in: received.appendingPathComponent("photos (2)")) == tree)
        #expect(try finished[0].result.get().path == received.path + "/photos (2)")
    }

    @Test("hostile paths from a hand-written peer land inside the receive directory; nothing is written outside")
    func hostilePaths() async throws {
        let scratch = try ScratchDirectory("folder-hostile")
        defer { scratch.remove() }
        var configuration = Session.Configuration.patient
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        configuration.resourceDirectory = directory
        let joined = try await RawJoinedSession("folder-target", configuration: configuration)
        let escape = "pc-escape-\(UUID().uuidString)"
        let names: [[UInt8]] = [
            Array("photos/../../\(escape)".utf8),
            Array("photos/a/../../../../../tmp/\(escape)".utf8),
            Array("/tmp/\(escape)".utf8),
            Array("photos//x".utf8),
            Array("./.hidden/x".utf8),
            Array("nul\u{0}/line\nbreak/x".utf8),
            Array(Array(repeating: "d", count: 300).joined(separator: "/").utf8),
        ]
        for (index, name) in names.enumerated() {
            let content = Array("content \(index)".utf8)
            joined.socket.send(
                HandFrames.openResource(channel: UInt32(2 * index + 1), size: UInt64(content.count), name: name)
                    + HandFrames.resource(channel: UInt32(2 * index + 1), content)
            )
        }
        let finished = try await joined.log.waitForResources(names.count)
        let root = directory.resolvingSymlinksInPath().path + "/"
        var placed = 0
        for (name, result) in finished {
            switch result {
            case .success(let url):
                placed += 1
                #expect(url.resolvingSymlinksInPath().path.hasPrefix(root), "\(name)")
            case .failure(let error):
                #expect(name.hasPrefix("d/d/d"), "only the 300-component path is refused: \(error)")
                #expect(error.detail?.contains("300 components") == true)
            }
        }
        #expect(placed == names.count - 1)
        #expect(try scratch.contents() == ["received"], "nothing beside the receive directory")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/\(escape)"))
        #expect(try folderFiles(in: directory).count == names.count - 1)
    }

    @Test("hostile paths in a folder stream from a hand-written peer land inside the folder; a path too deep ends it")
    func hostileFolderStream() async throws {
        let scratch = try ScratchDirectory("folder-stream-hostile")
        defer { scratch.remove() }
        var configuration = Session.Configuration.patient
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        configuration.resourceDirectory = directory
        let joined = try await RawJoinedSession("folder-stream-target", configuration: configuration)
        let escape = "pc-escape-\(UUID().uuidString)"
        let paths = [
            "../../\(escape)", "a/../../../../../tmp/\(escape)", "/tmp/\(escape)", "x//y", "./.hidden/z",
            "nul\u{0}/line\nbreak/w",
        ]
        let files = paths.enumerated().map { (Array($1.utf8), Array("content \($0)".utf8)) }
        let stream = HandFrames.folderStream(files)
        joined.socket.send(
            HandFrames.openFolder(channel: 1, size: UInt64(stream.count), name: Array("drop".utf8))
                + HandFrames.resource(channel: 1, stream)
        )
        let finished = try await joined.log.waitForResources(1)
        #expect(try finished[0].result.get().path == directory.path + "/drop")
        let placed = try folderFiles(in: directory)
        #expect(placed.count == paths.count)
        #expect(placed.keys.allSatisfy { $0.hasPrefix("drop/") }, "\(placed.keys.sorted())")
        #expect(Set(placed.values) == Set(files.map { Data($0.1) }))
        #expect(try scratch.contents() == ["received"], "nothing beside the receive directory")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/\(escape)"))

        // A path of 40 components: refused when its entry starts, after the file before it is staged; the
        // folder is not placed, and what it staged is removed.
        let deep = Array(Array(repeating: "d", count: 40).joined(separator: "/").utf8)
        let second = HandFrames.folderStream([(Array("first.txt".utf8), [1, 2, 3]), (deep, [4])])
        joined.socket.send(
            HandFrames.openFolder(channel: 3, size: UInt64(second.count), name: Array("deep".utf8))
                + HandFrames.resource(channel: 3, second)
        )
        let both = try await joined.log.waitForResources(2)
        let error = #expect(throws: TransferError.self) { try both[1].result.get() }
        #expect(error?.detail?.contains("components") == true, "\(String(describing: error))")
        #expect(try scratch.contents("received") == ["drop"], "no partial file or staging directory is left")
    }

    @Test("a folder block whose digest does not match ends the folder: none of its files is written")
    func corruptedFolderBlock() async throws {
        let scratch = try ScratchDirectory("folder-stream-corrupt")
        defer { scratch.remove() }
        var configuration = Session.Configuration.patient
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        configuration.resourceDirectory = directory
        let joined = try await RawJoinedSession("folder-corrupt-target", configuration: configuration)
        let stream = HandFrames.folderStream([(Array("a.txt".utf8), Array("alpha".utf8))])
        joined.socket.send(
            HandFrames.openFolder(channel: 1, size: UInt64(stream.count), name: Array("bad".utf8))
                + HandFrames.resource(channel: 1, stream, blockDigest: [UInt8](repeating: 7, count: 8))
        )
        let finished = try await joined.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error == TransferError.digestMismatch(peer: error?.peer, name: "bad"), "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad").path))
        #expect(receiveDirectoryEntries(directory).isEmpty, "no partial file or staging directory is left")
    }

    @Test("cancelling a folder's transfer cancels the files in flight and starts no more; no partial file is left")
    func cancel() async throws {
        let scratch = try ScratchDirectory("folder-cancel")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch, window: 256 << 10)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let block = pattern(count: 1 << 20, seed: 5)
        try writeFolder(Dictionary(uniqueKeysWithValues: (0..<64).map { ("f\($0).bin", block) }), in: source)

        let transfer = try pair.client.sendResource(at: source, withName: "big", toPeer: pair.host.peer)
        _ = try await pair.hostLog.waitForStartedResources(1)
        transfer.progress.cancel()
        await #expect(throws: TransferError.cancelled(peer: pair.host.peer, name: "big")) {
            try await transfer.wait()
        }
        // Every file the receiver saw start has ended; no more start. The OPENs of the files that were in
        // flight may still be on their way: let them arrive first.
        try await Task.sleep(for: .milliseconds(300))
        let started = pair.hostLog.startedResources.count
        _ = try await pair.hostLog.waitForResources(started)
        try await Task.sleep(for: .milliseconds(300))
        #expect(pair.hostLog.startedResources.count == started)
        #expect(started < 64)
        #expect(pair.hostLog.finishedResources.contains { (try? $0.result.get()) == nil }, "files in flight failed")
        let received = scratch.url.appendingPathComponent("received", isDirectory: true)
        let left = (FileManager.default.enumerator(atPath: received.path)?.allObjects as? [String]) ?? []
        #expect(!left.contains { $0.contains(".partial-") }, "no partial file is left")
        #expect(pair.client.connectedPeers == [pair.host.peer])
    }

    @Test("a folder holding a path deeper than a receiver takes is refused at once; nothing is sent")
    func tooDeep() async throws {
        let scratch = try ScratchDirectory("folder-deep")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        let deep = (0..<32).map { "l\($0)" }.joined(separator: "/")
        try writeFolder(["ok.txt": Data("ok".utf8), "\(deep)/file.txt": Data("deep".utf8)], in: source)
        let error = #expect(throws: TransferError.self) {
            try pair.client.sendResource(at: source, withName: "deep", toPeer: pair.host.peer)
        }
        #expect(error?.detail?.contains("32 components") == true, "\(String(describing: error))")
        try await Task.sleep(for: .milliseconds(200))
        #expect(pair.hostLog.startedResources.isEmpty)
    }

    @Test("an empty folder, or one with only links, succeeds and sends nothing")
    func emptyFolder() async throws {
        let scratch = try ScratchDirectory("folder-empty")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let source = scratch.url.appendingPathComponent("source/empty-sub", isDirectory: true)
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: source.appendingPathComponent("link"),
            withDestinationURL: URL(fileURLWithPath: "/etc/hostname")
        )
        let transfer = try pair.client.sendResource(
            at: source.deletingLastPathComponent(),
            withName: "nothing",
            toPeer: pair.host.peer
        )
        try await transfer.wait()
        #expect(transfer.progress.totalUnitCount == 0)
        try await Task.sleep(for: .milliseconds(200))
        #expect(pair.hostLog.startedResources.isEmpty)
    }
}
