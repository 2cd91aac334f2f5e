import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

/// What the reflector removes after confirming a runner's resource: the file or folder, and the folders
/// its path made that it leaves empty.
@Suite("Reflector cleanup")
struct ReflectorCleanupTests {
    @Test("a folder's file sent as a resource of its own goes with the folders it leaves empty, not with others")
    func emptyFoldersGo() throws {
        let scratch = try ScratchDirectory("reflector-cleanup")
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        let deep = directory.appendingPathComponent("album/a/b", isDirectory: true)
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        let first = deep.appendingPathComponent("one.txt")
        let second = directory.appendingPathComponent("album/two.txt")
        try Data("1".utf8).write(to: first)
        try Data("2".utf8).write(to: second)

        ReflectorService.removeReceived(first, in: directory)
        #expect(try scratch.contents("received/album") == ["two.txt"], "a and b went; album holds two.txt")
        ReflectorService.removeReceived(second, in: directory)
        #expect(try scratch.contents("received").isEmpty, "album went too; the receive directory stays")
    }

    @Test("a folder received whole goes in one piece")
    func wholeFolder() throws {
        let scratch = try ScratchDirectory("reflector-cleanup-whole")
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("received", isDirectory: true)
        let folder = directory.appendingPathComponent("album", isDirectory: true)
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("x"),
            withIntermediateDirectories: true
        )
        try Data("1".utf8).write(to: folder.appendingPathComponent("x/one.txt"))
        ReflectorService.removeReceived(folder, in: directory)
        #expect(try scratch.contents("received").isEmpty)
    }
}
