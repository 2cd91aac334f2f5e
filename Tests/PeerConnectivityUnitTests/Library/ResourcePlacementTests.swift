import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Where a received file goes for the name (a path, for a folder's file) its sender gave it.
@Suite("ResourcePlacement")
struct ResourcePlacementTests {
    @Test(
        "hostile paths become components that stay below the receive directory",
        arguments: [
            ("photo.jpg", ["photo.jpg"]),
            ("../escape", ["escape"]),
            ("../x", ["x"]),
            ("a/../../x", ["a", "x"]),
            ("/etc/x", ["etc", "x"]),
            ("a//b", ["a", "b"]),
            ("./.hidden/x", ["hidden", "x"]),
            ("photos/2026/a.jpg", ["photos", "2026", "a.jpg"]),
            ("a\u{0}b/c\nd", ["a_b", "c_d"]),
            ("dir/..", ["dir"]),
            ("/", ["resource"]),
            ("../..", ["resource"]),
            ("..", ["resource"]),
            ("back\\slash/..\\x", ["back_slash", "_x"]),
        ]
    )
    func components(name: String, expected: [String]) throws {
        #expect(try ResourcePlacement.components(of: Array(name.utf8)) == expected)
    }

    @Test("a name without '/' is the one file name it was before paths")
    func flatNamesUnchanged() throws {
        for name in ["..", ".", ".hidden", "nul\u{0}byte", "   ", String(repeating: "é", count: 10_000)] {
            #expect(
                try ResourcePlacement.components(of: Array(name.utf8)) == [ResourceFileName.sanitized(Array(name.utf8))]
            )
        }
    }

    @Test("a path of more than 32 components, or longer than 1,024 bytes, is refused with its reason")
    func limits() throws {
        let deep = Array(repeating: "d", count: 300).joined(separator: "/")
        let error = #expect(throws: ResourcePlacement.Refusal.self) {
            try ResourcePlacement.components(of: Array(deep.utf8))
        }
        #expect(error?.description.contains("300 components") == true)
        let atLimit = Array(repeating: "d", count: 32).joined(separator: "/")
        #expect(try ResourcePlacement.components(of: Array(atLimit.utf8)).count == 32)
        let long = Array(repeating: String(repeating: "x", count: 150), count: 7).joined(separator: "/")
        #expect(throws: ResourcePlacement.Refusal.self) { try ResourcePlacement.components(of: Array(long.utf8)) }
    }

    /// A receive directory inside a scratch directory, with a finished file to place.
    private struct Receiver {
        let scratch: ScratchDirectory
        let directory: URL

        init(_ label: String) throws {
            scratch = try ScratchDirectory(label)
            directory = scratch.url.appendingPathComponent("received", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        /// Writes a partial file and places it under `name`.
        func place(_ name: [UInt8], content: String = "content") throws -> URL {
            let partial = directory.appendingPathComponent(".partial-\(UUID().uuidString)").path
            try Data(content.utf8).write(to: URL(fileURLWithPath: partial))
            defer { try? FileManager.default.removeItem(atPath: partial) }
            let url = try ResourcePlacement.place(partial, named: name, inDirectoryAt: directory.path)
            #expect(!FileManager.default.fileExists(atPath: partial), "the partial name went with the move")
            #expect(try String(contentsOf: url, encoding: .utf8) == content)
            return url
        }

        /// Every path below the receive directory, relative to it, sorted.
        func tree() -> [String] {
            let enumerator = FileManager.default.enumerator(atPath: directory.path)
            return ((enumerator?.allObjects as? [String]) ?? []).sorted()
        }
    }

    @Test("folders are made as needed; a taken file name gets a free one; nothing is replaced")
    func makesFolders() throws {
        let receiver = try Receiver("placement")
        defer { receiver.scratch.remove() }
        let first = try receiver.place(Array("photos/2026/a.jpg".utf8), content: "one")
        let second = try receiver.place(Array("photos/2026/a.jpg".utf8), content: "two")
        #expect(first.path == receiver.directory.path + "/photos/2026/a.jpg")
        #expect(second.path == receiver.directory.path + "/photos/2026/a (2).jpg")
        #expect(try String(contentsOf: first, encoding: .utf8) == "one")
        #expect(try String(contentsOf: second, encoding: .utf8) == "two")
        #expect(receiver.tree() == ["photos", "photos/2026", "photos/2026/a (2).jpg", "photos/2026/a.jpg"])
    }

    @Test("hostile paths land inside the receive directory and nothing is written outside")
    func hostilePaths() throws {
        let receiver = try Receiver("placement-hostile")
        defer { receiver.scratch.remove() }
        let outside = "pc-outside-\(UUID().uuidString)"
        let names: [[UInt8]] = [
            Array("../\(outside)".utf8),
            Array("a/../../\(outside)".utf8),
            Array("/tmp/\(outside)".utf8),
            Array("a//b".utf8),
            Array("./.hidden/x".utf8),
            Array("nul\u{0}/ctl\u{1B}[31m/x".utf8),
            [0xFF, 0x2F, 0x2E, 0x2E, 0x2F, 0xC0, 0xAF, 0x2F, 0x2E, 0x2E],
            Array((Array(repeating: "..", count: 40) + [outside]).joined(separator: "/").utf8),
        ]
        let root = receiver.directory.resolvingSymlinksInPath().path + "/"
        for name in names {
            let url = try receiver.place(name)
            #expect(url.resolvingSymlinksInPath().path.hasPrefix(root), "\(url.path)")
            #expect(url.pathComponents.allSatisfy { !$0.hasPrefix(".") || $0 == "/" })
        }
        #expect(try receiver.scratch.contents() == ["received"], "nothing beside the receive directory")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/\(outside)"))
        let tree = Set(receiver.tree())
        #expect(tree.isSuperset(of: [outside, "a/\(outside)", "tmp/\(outside)", "a/b", "hidden/x", "nul_/ctl_[31m/x"]))
        #expect(throws: ResourcePlacement.Refusal.self) {
            try receiver.place(Array(Array(repeating: "d", count: 300).joined(separator: "/").utf8))
        }
        #expect(!receiver.tree().contains("d"), "a refused path makes no folder")
    }

    @Test("a symbolic link planted in the receive directory is not followed: the folder gets a free name")
    func plantedLink() throws {
        let receiver = try Receiver("placement-link")
        defer { receiver.scratch.remove() }
        let outside = try ScratchDirectory("placement-outside")
        defer { outside.remove() }
        try FileManager.default.createSymbolicLink(
            at: receiver.directory.appendingPathComponent("photos"),
            withDestinationURL: outside.url
        )
        try Data("file".utf8).write(to: receiver.directory.appendingPathComponent("docs"))
        let photo = try receiver.place(Array("photos/a.jpg".utf8))
        let doc = try receiver.place(Array("docs/deep/b.txt".utf8))
        #expect(try outside.contents().isEmpty, "nothing was written through the link")
        #expect(photo.path == receiver.directory.path + "/photos (2)/a.jpg")
        #expect(doc.path == receiver.directory.path + "/docs (2)/deep/b.txt")
        #expect(try String(contentsOf: receiver.directory.appendingPathComponent("docs"), encoding: .utf8) == "file")
        // The next file of the same folder goes to the same place.
        #expect(try receiver.place(Array("photos/b.jpg".utf8)).path == receiver.directory.path + "/photos (2)/b.jpg")
    }

    @Test("a symbolic link deeper on the path, to outside or back inside the directory, is not followed either")
    func deeperLink() throws {
        let receiver = try Receiver("placement-deeper-link")
        defer { receiver.scratch.remove() }
        let outside = try ScratchDirectory("placement-deeper-outside")
        defer { outside.remove() }
        // Real folders first, so that the one-step open finds the path there and the link is what stops it.
        _ = try receiver.place(Array("photos/2026/a.jpg".utf8))
        _ = try receiver.place(Array("photos/2027/a.jpg".utf8))
        let photos = receiver.directory.appendingPathComponent("photos")
        try FileManager.default.removeItem(at: photos.appendingPathComponent("2026"))
        try FileManager.default.createSymbolicLink(
            at: photos.appendingPathComponent("2026"),
            withDestinationURL: outside.url
        )
        try FileManager.default.removeItem(at: photos.appendingPathComponent("2027"))
        try FileManager.default.createSymbolicLink(
            at: photos.appendingPathComponent("2027"),
            withDestinationURL: photos
        )
        let outsideOne = try receiver.place(Array("photos/2026/b.jpg".utf8))
        let insideOne = try receiver.place(Array("photos/2027/b.jpg".utf8))
        #expect(try outside.contents().isEmpty, "nothing was written through the link")
        #expect(outsideOne.path == receiver.directory.path + "/photos/2026 (2)/b.jpg")
        #expect(insideOne.path == receiver.directory.path + "/photos/2027 (2)/b.jpg")
        #expect(!FileManager.default.fileExists(atPath: photos.appendingPathComponent("b.jpg").path))
    }
}
