import Foundation
import Testing

/// Writes `files` (relative path: content) below `root`, making the folders.
func writeFolder(_ files: [String: Data], in root: URL) throws {
    for (path, content) in files {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try content.write(to: url)
    }
}

/// The length of the folder stream of `files` (relative path: content): each file's bytes and its header
/// (10 bytes and its path).
func folderStreamLength(_ files: [String: Data]) -> Int64 {
    Int64(files.reduce(0) { $0 + 10 + $1.key.utf8.count + $1.value.count })
}

/// The regular files below `root` (relative path: content); a symbolic link fails the test.
func folderFiles(in root: URL) throws -> [String: Data] {
    var found: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: root.path)
    while let path = enumerator?.nextObject() as? String {
        let url = root.appendingPathComponent(path)
        let type = try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
        #expect(type != .typeSymbolicLink, "\(path) is a symbolic link")
        if type == .typeRegular { found[path] = try Data(contentsOf: url) }
    }
    return found
}

/// The names in a receive directory, hidden ones too, sorted; none when it was never made.
func receiveDirectoryEntries(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}
