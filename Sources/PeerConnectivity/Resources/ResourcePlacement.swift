import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// Where a finished resource goes in the receive directory, from the name its sender gave it
/// (untrusted bytes), and the step that puts it there. The path is Core's ``ResourcePath`` (pure: a
/// path never climbs, each component a safe name, "resource" for a name that makes none, a depth and a
/// length refused past their limits).
///
/// Placing opens the path's folders below the receive directory in one step that follows no symbolic
/// link and cannot leave it (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`); when that fails (a
/// folder missing or in the way, or no `openat2`), it walks the path one directory at a time, relative
/// to the directory opened before (`openat` with `O_NOFOLLOW`), so no symbolic link is ever followed,
/// wherever it was planted; a missing directory is made. A name in the way that is not a directory (a file, a
/// symbolic link, anything else) is never replaced nor entered: the first free alternative of it,
/// "photos (2)", "photos (3)", ..., is used instead, the same for every file of the folder. The file
/// itself is moved to the first free name of ``ResourceFileName/candidates(for:)`` by a rename that
/// never replaces anything (`renameat2` with `RENAME_NOREPLACE`; a hard link and an unlink on a file
/// system without it).
enum ResourcePlacement {
    /// The most components a path keeps, the folder's own name included (``ResourcePath/maximumDepth``).
    static let maximumDepth = ResourcePath.maximumDepth

    /// The longest path made, in UTF-8 bytes (``ResourcePath/maximumPathLength``).
    static let maximumPathLength = ResourcePath.maximumPathLength

    /// Why a name cannot be placed.
    typealias Refusal = ResourcePath.Refusal

    /// The safe relative path for `raw`, one component a step, never empty (``ResourcePath``).
    ///
    /// - Parameter raw: the name as sent.
    /// - Returns: the components: each a safe file name, none "." or "..".
    /// - Throws: ``Refusal`` when the path is deeper than ``maximumDepth`` or longer than
    ///   ``maximumPathLength``.
    static func components(of raw: [UInt8]) throws -> [String] {
        try ResourcePath(raw).components
    }

    /// Moves the finished file at `partial` into the receive directory under the path made from `raw`.
    ///
    /// - Parameters:
    ///   - partial: the complete, checked file; once this returns, it has its new name only (when it
    ///     throws, it keeps its own, for the caller to remove).
    ///   - raw: the name as sent.
    ///   - directory: the receive directory's path (a receiver has it at hand: asking a URL for it again
    ///     costs more than a small file's system calls).
    /// - Returns: the file's final URL.
    /// - Throws: ``Refusal`` for a path too deep or too long, or when no free name is left;
    ///   `SystemCallError` when the file system fails.
    static func place(_ partial: String, named raw: [UInt8], inDirectoryAt directory: String) throws -> URL {
        try place(partial, named: raw, inDirectoryAt: directory, isDirectory: false)
    }

    /// Moves a folder received whole, complete and checked in its hidden staging directory, into the
    /// receive directory under the path made from `raw`, in one rename: before it the folder is not
    /// there, after it it is there whole. A name that is taken, by a file or a folder, is never replaced
    /// nor merged into: the first free alternative, "photos (2)", ..., is used. A name that makes no
    /// path ("", ".", "..", "/") gives "resource", as for a file.
    ///
    /// - Parameters:
    ///   - staging: the staging directory; once this returns, it has its new name only.
    ///   - raw: the folder's name as sent.
    ///   - directory: the receive directory's path.
    /// - Returns: the folder's final URL.
    /// - Throws: as ``place(_:named:inDirectoryAt:)``.
    static func placeFolder(_ staging: String, named raw: [UInt8], inDirectoryAt directory: String) throws -> URL {
        try place(staging, named: raw, inDirectoryAt: directory, isDirectory: true)
    }

    private static func place(
        _ partial: String,
        named raw: [UInt8],
        inDirectoryAt directory: String,
        isDirectory: Bool
    ) throws -> URL {
        let components = try components(of: raw)
        // The names used, joined once at the end: a URL appended to a component at a time costs more
        // than the system calls of a small file.
        var used: [String] = []
        used.reserveCapacity(components.count)
        var current = try Platform.openDirectory(atPath: directory)
        defer { Platform.close(current) }
        let folders = components.dropLast()
        if let inner = Platform.openBeneath(folders.map { Array($0.utf8) }, in: current, isDirectory: true) {
            // Every folder on the path is there and is one: what the walk below would have found.
            Platform.close(current)
            current = inner
            used.append(contentsOf: folders)
        } else {
            for component in folders {
                let (name, next) = try enter(component, in: current)
                Platform.close(current)
                current = next
                used.append(name)
            }
        }
        let last = components[components.count - 1]
        for candidate in ResourceFileName.candidates(for: last) {
            let moved =
                isDirectory
                ? try moveDirectory(partial, to: Array(candidate.utf8), in: current)
                : try move(partial, to: Array(candidate.utf8), in: current)
            guard moved else { continue }
            used.append(candidate)
            return URL(
                filePath: directory + "/" + used.joined(separator: "/"),
                directoryHint: isDirectory ? .isDirectory : .notDirectory
            )
        }
        let folder = used.isEmpty ? directory : directory + "/" + used.joined(separator: "/")
        throw Refusal(description: "no free name for \(last) in \(folder)")
    }

    /// Moves the file at `partial` to `name` in `directory` unless the name is taken: a rename that never
    /// replaces, or, where the file system cannot do that, a hard link and the partial name removed.
    ///
    /// - Returns: whether it moved; `false` when the name is taken (the partial file stays).
    private static func move(_ partial: String, to name: [UInt8], in directory: Int32) throws -> Bool {
        do {
            try Platform.moveWithoutReplacing(partial, to: name, in: directory)
            return true
        } catch let error as SystemCallError where error.isNameTaken {
            return false
        } catch let error as SystemCallError where error.isUnsupported {
            do {
                try Platform.link(partial, to: name, in: directory)
            } catch let error as SystemCallError where error.isNameTaken {
                return false
            }
            Platform.unlink(partial)
            return true
        }
    }

    /// Moves the directory at `staging` to `name` in `directory` unless the name is taken: a rename that
    /// never replaces, or, where the file system cannot do that, an empty directory made under the name
    /// (which fails if it is taken) and replaced by the rename.
    ///
    /// - Returns: whether it moved; `false` when the name is taken (the staging directory stays).
    private static func moveDirectory(_ staging: String, to name: [UInt8], in directory: Int32) throws -> Bool {
        do {
            try Platform.moveWithoutReplacing(staging, to: name, in: directory)
            return true
        } catch let error as SystemCallError where error.isNameTaken {
            return false
        } catch let error as SystemCallError where error.isUnsupported {
            do {
                try Platform.makeDirectory(name, in: directory)
            } catch let error as SystemCallError where error.isNameTaken {
                return false
            }
            do {
                try Platform.moveOntoEmptyDirectory(staging, to: name, in: directory)
            } catch let error as SystemCallError where error.isNameTaken || error.isNotEmpty || error.isNotDirectory {
                return false
            }
            return true
        }
    }

    /// Opens the directory `component` in `parent`, making it if it is missing; when the name is taken
    /// by something else, the first of its alternatives that is (or can be made) a directory.
    ///
    /// - Returns: the name used and the directory's descriptor.
    private static func enter(_ component: String, in parent: Int32) throws -> (String, Int32) {
        for candidate in ResourceFileName.candidates(for: component) {
            let name = Array(candidate.utf8)
            do {
                return (candidate, try Platform.openDirectory(name, in: parent))
            } catch let error as SystemCallError where error.isNotDirectory {
                continue
            } catch let error as SystemCallError where error.isMissing {
                do {
                    try Platform.makeDirectory(name, in: parent)
                } catch let error as SystemCallError where error.isNameTaken {
                    // Made at the same moment by another file of the folder, or taken by something else:
                    // opening it again tells which.
                }
                do {
                    return (candidate, try Platform.openDirectory(name, in: parent))
                } catch let error as SystemCallError where error.isNotDirectory {
                    continue
                }
            }
        }
        throw Refusal(description: "no free directory name for \(component)")
    }
}
