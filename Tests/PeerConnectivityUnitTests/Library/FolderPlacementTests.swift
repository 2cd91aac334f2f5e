import Foundation
import PeerConnectivityTesting
import PeerConnectivityTransport
import Testing

@testable import PeerConnectivity

/// Where a folder received whole goes from its staging directory, for the name its sender gave it, and
/// how a staging directory is removed.
@Suite("Folder placement")
struct FolderPlacementTests {
    /// A receive directory with a staging directory holding one file, `a.txt`.
    private struct Receiver {
        let scratch: ScratchDirectory
        let directory: URL

        init(_ label: String) throws {
            scratch = try ScratchDirectory(label)
            directory = scratch.url.appendingPathComponent("received", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        /// Stages a folder holding `a.txt` with `content` and places it under `name`.
        func place(_ name: [UInt8], content: String = "content") throws -> URL {
            let staging = directory.appendingPathComponent(".partial-\(UUID().uuidString).d")
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
            try Data(content.utf8).write(to: staging.appendingPathComponent("a.txt"))
            let url = try ResourcePlacement.placeFolder(staging.path, named: name, inDirectoryAt: directory.path)
            #expect(!FileManager.default.fileExists(atPath: staging.path), "the staging name went with the move")
            #expect(try String(contentsOf: url.appendingPathComponent("a.txt"), encoding: .utf8) == content)
            return url
        }

        /// Every path below the receive directory, relative to it, sorted.
        func tree() -> [String] {
            let enumerator = FileManager.default.enumerator(atPath: directory.path)
            return ((enumerator?.allObjects as? [String]) ?? []).sorted()
        }
    }

    @Test("a folder named '..', '/', '.' or nothing lands in a folder of its own inside the receive directory")
    func namesThatMakeNoPath() throws {
        let receiver = try Receiver("folder-placement-names")
        defer { receiver.scratch.remove() }
        var placed: [String] = []
        for name in ["..", "/", ".", "", "../..", "/.."] {
            placed.append(try receiver.place(Array(name.utf8), content: name).path)
        }
        let base = receiver.directory.path + "/resource"
        #expect(placed == [base] + (2...6).map { "\(base) (\($0))" })
        #expect(receiver.tree().allSatisfy { $0.hasPrefix("resource") }, "\(receiver.tree())")
        #expect(try receiver.scratch.contents() == ["received"], "nothing beside the receive directory")
    }

    @Test("a folder whose name is taken, by a folder or a file, gets a free name: nothing is merged or replaced")
    func takenName() throws {
        let receiver = try Receiver("folder-placement-taken")
        defer { receiver.scratch.remove() }
        let first = try receiver.place(Array("album".utf8), content: "one")
        try Data("file".utf8).write(to: receiver.directory.appendingPathComponent("docs"))
        let second = try receiver.place(Array("album".utf8), content: "two")
        let doc = try receiver.place(Array("docs".utf8))
        let nested = try receiver.place(Array("trips/2026".utf8))
        #expect(first.path == receiver.directory.path + "/album")
        #expect(second.path == receiver.directory.path + "/album (2)")
        #expect(doc.path == receiver.directory.path + "/docs (2)")
        #expect(nested.path == receiver.directory.path + "/trips/2026")
        #expect(try String(contentsOf: first.appendingPathComponent("a.txt"), encoding: .utf8) == "one")
        #expect(try String(contentsOf: receiver.directory.appendingPathComponent("docs"), encoding: .utf8) == "file")
    }

    @Test("removing a staging directory removes its tree and enters no symbolic link planted in it")
    func removeTree() throws {
        let receiver = try Receiver("folder-placement-remove")
        defer { receiver.scratch.remove() }
        let outside = try ScratchDirectory("folder-placement-outside")
        defer { outside.remove() }
        try Data("keep".utf8).write(to: outside.url.appendingPathComponent("kept.txt"))
        let staging = receiver.directory.appendingPathComponent(".partial-tree.d")
        let deep = staging.appendingPathComponent("a/b/c", isDirectory: true)
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: deep.appendingPathComponent("x.txt"))
        try FileManager.default.createSymbolicLink(
            at: staging.appendingPathComponent("a/link"),
            withDestinationURL: outside.url
        )
        Platform.removeTree(atPath: staging.path)
        #expect(receiver.tree().isEmpty, "\(receiver.tree())")
        #expect(try outside.contents() == ["kept.txt"], "nothing was removed through the link")
        Platform.removeTree(atPath: staging.path)  // A missing tree is no error.
    }
}
