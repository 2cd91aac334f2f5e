import Foundation

/// Runs stored inputs through ``FrameFuzzer``: the committed corpus as a regression test.
package enum CorpusReplay {
    /// The files at `path` (itself if a file, else the files in the folder, sorted, hidden ones skipped).
    ///
    /// - Parameter path: a file or a folder.
    /// - Returns: file URLs.
    /// - Throws: when the folder cannot be read.
    package static func files(at path: String) throws -> [URL] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            return [URL(fileURLWithPath: path)]
        }
        return try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { !$0.hasPrefix(".") }
            .sorted()
            .map { URL(fileURLWithPath: path).appendingPathComponent($0) }
    }

    /// Runs one file through the fuzz target (a broken invariant traps).
    ///
    /// - Parameter file: the input.
    /// - Throws: when the file cannot be read.
    package static func replay(_ file: URL) throws {
        let data = try Data(contentsOf: file)
        _ = data.withUnsafeBytes { FrameFuzzer.run($0) }
    }
}
