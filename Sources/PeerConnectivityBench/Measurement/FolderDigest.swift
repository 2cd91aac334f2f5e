import Crypto
import Foundation

/// The regular files of a folder tree, their bytes, and one SHA-256 over all of them: each file's
/// path relative to the folder, size and SHA-256, in the order of the paths' UTF-8 bytes. Two trees with
/// the same files at the same places and the same contents have the same digest, whatever order their
/// files were written in. Empty folders and anything but regular files (symbolic links, devices) are
/// left out.
public struct FolderDigest: Hashable, Sendable {
    /// The regular files in the tree.
    public var files: Int
    /// Their bytes together.
    public var bytes: Int
    /// The SHA-256 over every file's path, size and SHA-256, 64 lowercase hexadecimal digits.
    public var sha256: String

    /// The smallest and largest file ``writeTree(at:files:seed:pattern:)`` writes, in bytes.
    public static let generatedSizes = 1_024...65_536
    /// The files ``writeTree(at:files:seed:pattern:)`` puts in one folder.
    public static let filesPerFolder = 100

    /// Makes a digest of known values.
    ///
    /// - Parameters:
    ///   - files: regular files.
    ///   - bytes: their bytes.
    ///   - sha256: hexadecimal SHA-256 of the tree.
    public init(files: Int, bytes: Int, sha256: String) {
        self.files = files
        self.bytes = bytes
        self.sha256 = sha256
    }

    /// Reads every regular file under a folder and hashes the tree.
    ///
    /// - Parameter url: a local folder.
    /// - Throws: when the folder cannot be listed or a file cannot be read.
    public init(of url: URL) throws {
        let root = url.standardizedFileURL.resolvingSymlinksInPath()
        guard
            let walker = FileManager.default.enumerator(
                at: root,
                includingPropertiesForKeys: [.isRegularFileKey],
                options: [],
                errorHandler: nil
            )
        else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        let prefix = root.path + "/"
        var entries: [(path: String, url: URL)] = []
        for case let file as URL in walker {
            guard try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            let path = file.standardizedFileURL.path
            entries.append((path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path, file))
        }
        entries.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        var hasher = SHA256()
        var bytes = 0
        for entry in entries {
            let digest = try FileDigest(of: entry.url)
            hasher.update(data: Data("\(entry.path)\0\(digest.size)\0\(digest.sha256)\n".utf8))
            bytes += digest.size
        }
        self.init(
            files: entries.count,
            bytes: bytes,
            sha256: hasher.finalize().map { String(format: "%02x", $0) }.joined()
        )
    }

    /// Writes a tree of `files` files of ``generatedSizes`` bytes each, the sizes drawn from `seed`,
    /// ``filesPerFolder`` to a folder, two levels deep (`d00/e00/f00000.bin`), file `n` holding the
    /// pattern's bytes of stream `n`; then hashes it.
    ///
    /// - Parameters:
    ///   - url: the tree's folder; it must not exist.
    ///   - files: how many files.
    ///   - seed: the seed of the sizes: the same seed gives the same tree.
    ///   - pattern: the bytes.
    /// - Returns: the tree's digest.
    /// - Throws: when a folder or file cannot be made.
    public static func writeTree(at url: URL, files: Int, seed: UInt64, pattern: StreamPattern) throws
        -> FolderDigest
    {
        let span = UInt32(generatedSizes.count)
        for index in 0..<files {
            let folder = url.appendingPathComponent(String(format: "d%02d", index / 1_000))
                .appendingPathComponent(String(format: "e%02d", index / filesPerFolder % 10))
            if index % filesPerFolder == 0 {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            // The sizes are the pattern's own pseudo-random bytes: four of stream `seed` for each file.
            let draw = pattern.bytes(index: Int(seed % 1_000_003), offset: index * 4, count: 4)
                .reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let size = generatedSizes.lowerBound + Int(draw % span)
            let file = folder.appendingPathComponent(String(format: "f%05d.bin", index))
            _ = try FileDigest.writePatternFile(at: file, size: size, index: index, pattern: pattern)
        }
        return try FolderDigest(of: url)
    }

    /// Whether a URL names a folder (following a symbolic link).
    ///
    /// - Parameter url: a local path.
    /// - Returns: true for a folder.
    public static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
