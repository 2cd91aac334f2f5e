import Foundation
import PeerConnectivityTesting
import PeerConnectivityTransport
import Testing

/// `Platform.openBeneath`: a path below a directory opened in one step, through no symbolic link, or
/// `nil` for the caller to walk it. Placing a folder's files and reading them rest on it.
@Suite("Platform.openBeneath")
struct OpenBeneathTests {
    /// `a/b/file` (holding "inside") in a scratch directory opened as the base, and a folder outside it.
    private struct Tree {
        let scratch: ScratchDirectory
        let outside: ScratchDirectory
        let base: Int32

        init() throws {
            scratch = try ScratchDirectory("open-beneath")
            outside = try ScratchDirectory("open-beneath-outside")
            let folder = scratch.url.appendingPathComponent("a/b", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("inside".utf8).write(to: folder.appendingPathComponent("file"))
            try Data("outside".utf8).write(to: outside.url.appendingPathComponent("file"))
            base = try Platform.openDirectory(atPath: scratch.url.path)
        }

        func link(_ path: String, to destination: URL) throws {
            try FileManager.default.createSymbolicLink(
                at: scratch.url.appendingPathComponent(path),
                withDestinationURL: destination
            )
        }

        func remove() {
            Platform.close(base)
            scratch.remove()
            outside.remove()
        }
    }

    private static func components(_ path: String) -> [[UInt8]] {
        path.split(separator: "/").map { Array($0.utf8) }
    }

    /// The first bytes of the open file `descriptor`, which it closes.
    private static func contents(_ descriptor: Int32) throws -> String {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    @Test("a file and a folder on a path of real folders open in one step")
    func plainPath() throws {
        let tree = try Tree()
        defer { tree.remove() }
        let file = try #require(Platform.openBeneath(Self.components("a/b/file"), in: tree.base, isDirectory: false))
        #expect(try Self.contents(file) == "inside")
        let folder = try #require(Platform.openBeneath(Self.components("a/b"), in: tree.base, isDirectory: true))
        defer { Platform.close(folder) }
        #expect(try Platform.entryKind(Array("file".utf8), in: folder) == .regular(size: 6))
    }

    @Test(
        "a symbolic link anywhere on the path, to outside or to inside, is not followed",
        arguments: ["a", "a/b", "a/b/file"]
    )
    func linkOnPath(replaced: String) throws {
        let tree = try Tree()
        defer { tree.remove() }
        let original = tree.scratch.url.appendingPathComponent(replaced)
        let moved = tree.scratch.url.appendingPathComponent("moved")
        try FileManager.default.moveItem(at: original, to: moved)
        // A link to the same thing, moved aside inside the base, is refused as much as one to outside.
        try tree.link(replaced, to: moved)
        #expect(Platform.openBeneath(Self.components("a/b/file"), in: tree.base, isDirectory: false) == nil)
        try FileManager.default.removeItem(at: original)
        let destination = replaced == "a/b/file" ? "file" : ""
        try tree.link(replaced, to: tree.outside.url.appendingPathComponent(destination))
        #expect(Platform.openBeneath(Self.components("a/b/file"), in: tree.base, isDirectory: false) == nil)
        if replaced != "a/b/file" {
            #expect(Platform.openBeneath(Self.components("a/b"), in: tree.base, isDirectory: true) == nil)
        }
    }

    @Test("a missing name, a file where a folder must be, or a folder where a file is asked, gives nil")
    func notThere() throws {
        let tree = try Tree()
        defer { tree.remove() }
        #expect(Platform.openBeneath(Self.components("a/missing/file"), in: tree.base, isDirectory: false) == nil)
        #expect(Platform.openBeneath(Self.components("a/b/file/x"), in: tree.base, isDirectory: false) == nil)
        #expect(Platform.openBeneath(Self.components("a/b/file"), in: tree.base, isDirectory: true) == nil)
        #expect(Platform.openBeneath([], in: tree.base, isDirectory: true) == nil)
    }
}
