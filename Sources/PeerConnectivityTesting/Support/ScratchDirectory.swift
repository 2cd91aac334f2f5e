import Foundation

/// A new empty directory under the system's temporary directory; `remove()` deletes it.
package struct ScratchDirectory {
    /// The directory.
    package let url: URL

    /// Makes the directory.
    ///
    /// - Parameter label: a word of the directory's name, to tell whose it is.
    /// - Throws: if it cannot be made.
    package init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pc-test-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Names of what the directory holds, hidden files included, sorted.
    package func contents(_ sub: String? = nil) throws -> [String] {
        let directory = sub.map { url.appendingPathComponent($0) } ?? url
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// A file of `mebibytes` MiB (one pattern repeated: cheap to make), for transfers cut short.
    ///
    /// Written on a thread of its own: hundreds of MiB can wait for the disk, and the cooperative pool's threads
    /// (as many as CPUs) are not to wait with them.
    package func largeFile(mebibytes: Int) async throws -> URL {
        let file = url.appendingPathComponent("large-\(mebibytes)")
        try await onOwnThread {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            let block = pattern(count: 1 << 20, seed: 11)
            for _ in 0..<mebibytes { try handle.write(contentsOf: block) }
            try handle.close()
        }
        return file
    }

    /// Deletes the directory and what it holds.
    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
