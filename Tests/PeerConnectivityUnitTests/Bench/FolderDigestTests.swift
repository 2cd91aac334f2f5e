import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

@Suite("Folder digests")
struct FolderDigestTests {
    @Test("a made tree: its files, sizes in range, 100 to a folder; the same seed makes the same tree")
    func madeTree() throws {
        let scratch = try ScratchDirectory("digest")
        defer { scratch.remove() }
        let pattern = StreamPattern()
        let first = try FolderDigest.writeTree(
            at: scratch.url.appendingPathComponent("a"),
            files: 250,
            seed: 22,
            pattern: pattern
        )
        let again = try FolderDigest.writeTree(
            at: scratch.url.appendingPathComponent("b"),
            files: 250,
            seed: 22,
            pattern: pattern
        )
        let otherSeed = try FolderDigest.writeTree(
            at: scratch.url.appendingPathComponent("c"),
            files: 250,
            seed: 23,
            pattern: pattern
        )
        #expect(first == again)
        #expect(first.files == 250 && otherSeed.files == 250)
        #expect(otherSeed.sha256 != first.sha256)
        #expect(try scratch.contents("a/d00") == ["e00", "e01", "e02"])
        #expect(try scratch.contents("a/d00/e02").count == 50)
        let size =
            try FileManager.default.attributesOfItem(
                atPath: scratch.url.appendingPathComponent("a/d00/e01/f00100.bin").path
            )[
                .size
            ] as? Int
        #expect(size.map { FolderDigest.generatedSizes.contains($0) } == true)
    }

    @Test("the digest follows every byte, name and place, not the order files were written in")
    func sensitivity() throws {
        let scratch = try ScratchDirectory("digest")
        defer { scratch.remove() }
        func tree(_ name: String, _ files: [(String, String)]) throws -> FolderDigest {
            let root = scratch.url.appendingPathComponent(name)
            for (path, text) in files {
                let url = root.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(),
                    withIntermediateDirectories: true
                )
                try Data(text.utf8).write(to: url)
            }
            return try FolderDigest(of: root)
        }
        let base = try tree("base", [("x/one", "1"), ("two", "22")])
        #expect(base.files == 2 && base.bytes == 3)
        #expect(try tree("reordered", [("two", "22"), ("x/one", "1")]) == base)
        #expect(try tree("byte", [("x/one", "2"), ("two", "22")]).sha256 != base.sha256)
        #expect(try tree("renamed", [("x/uno", "1"), ("two", "22")]).sha256 != base.sha256)
        #expect(try tree("moved", [("y/one", "1"), ("two", "22")]).sha256 != base.sha256)
        #expect(try tree("more", [("x/one", "1"), ("two", "22"), ("three", "")]).files == 3)
        // An empty folder and a symbolic link are not files.
        let linked = scratch.url.appendingPathComponent("base")
        try FileManager.default.createDirectory(
            at: linked.appendingPathComponent("empty"),
            withIntermediateDirectories: true
        )
        try FileManager.default.createSymbolicLink(
            at: linked.appendingPathComponent("link"),
            withDestinationURL: linked.appendingPathComponent("two")
        )
        #expect(try FolderDigest(of: linked) == base)
        #expect(FolderDigest.isFolder(linked) && !FolderDigest.isFolder(linked.appendingPathComponent("two")))
    }
}
