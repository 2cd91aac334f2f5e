import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// The folder writer's dealings with the receive directory: the room its files may take, its staging
/// directory, and what an entry on disk is.
extension FolderWriter {
    /// The disk a folder's files may take from now: the inodes and bytes free where they land (or, while
    /// the receive directory is not made yet, in the folder that will hold it).
    static func budget(in directory: String) -> FolderBudget {
        let parent = URL(filePath: directory).deletingLastPathComponent().path
        let bytes = Platform.freeBytes(atPath: directory) ?? Platform.freeBytes(atPath: parent)
        let inodes = Platform.freeInodes(atPath: directory) ?? Platform.freeInodes(atPath: parent)
        return FolderBudget(freeInodes: inodes, freeBytes: bytes)
    }

    /// Makes a new hidden staging directory, `.partial-<id>.d`, in the receive directory.
    ///
    /// - Returns: its path.
    static func makeStaging(in directoryPath: String) throws -> String {
        let name = PartialResourceStore.newPartialName() + ".d"
        let directory: Int32
        do {
            directory = try Platform.openDirectory(atPath: directoryPath)
        } catch let error as SystemCallError where error.isMissing {
            try FileManager.default.createDirectory(atPath: directoryPath, withIntermediateDirectories: true)
            directory = try Platform.openDirectory(atPath: directoryPath)
        }
        defer { Platform.close(directory) }
        try Platform.makeDirectory(Array(name.utf8), in: directory)
        return directoryPath + "/" + name
    }

    /// What the entry at `path` is, without following a symbolic link.
    static func kind(ofEntryAt path: String) throws -> Platform.EntryKind {
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = try Platform.openDirectory(atPath: String(path[..<slash]))
        defer { Platform.close(directory) }
        return try Platform.entryKind(Array(path[path.index(after: slash)...].utf8), in: directory)
    }
}
