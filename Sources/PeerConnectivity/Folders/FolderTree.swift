import Foundation
import PeerConnectivityTransport

/// The regular files of a folder to send, found without following any symbolic link: each with its
/// path below the folder and its length. Symbolic links, sockets, FIFOs and devices are skipped; so are
/// directories with nothing to send in them (a resource is a file, and carries the directories of its
/// path only).
struct FolderTree: Sendable {
    /// A regular file of the folder.
    struct File: Sendable {
        /// Its path below the folder, one raw name per component, as the file system has them.
        let components: [[UInt8]]
        /// The resource's name: the folder's name, "/", the path's components joined by "/".
        let name: String
        /// Its length when it was listed.
        let size: UInt64
    }

    /// The files, folder by folder in byte order of their names.
    private(set) var files: [File] = []
    /// The files' lengths added up.
    var totalBytes: UInt64 { files.reduce(0) { $0 + $1.size } }

    /// Whether `url` names a directory (following a symbolic link, as a URL the application chose may).
    static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Lists the folder open as `root`.
    ///
    /// - Parameters:
    ///   - root: the folder's descriptor.
    ///   - name: the name the folder is sent with.
    /// - Throws: ``ResourcePlacement/Refusal`` when a path would be deeper or longer than a receiver
    ///   takes (``ResourcePlacement/maximumDepth``, ``ResourcePlacement/maximumPathLength``);
    ///   `SystemCallError` when a directory cannot be read.
    init(root: Int32, name: String) throws {
        let prefixDepth = max(1, name.split(separator: "/").count)
        try visit(root, path: [], name: name, depth: prefixDepth)
    }

    private mutating func visit(_ directory: Int32, path: [[UInt8]], name prefix: String, depth: Int) throws {
        for entry in try Platform.entryNames(of: directory).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let components = path + [entry]
            let name = prefix + "/" + String(decoding: entry, as: UTF8.self)
            let kind: Platform.EntryKind
            do {
                kind = try Platform.entryKind(entry, in: directory)
            } catch let error as SystemCallError where error.isMissing {
                continue  // removed since it was listed
            }
            switch kind {
            case .regular(let size):
                guard depth + 1 <= ResourcePlacement.maximumDepth else {
                    throw Self.tooDeep(name)
                }
                guard name.utf8.count <= ResourcePlacement.maximumPathLength else {
                    throw ResourcePlacement.Refusal(
                        description: "\(name) is longer than the \(ResourcePlacement.maximumPathLength) bytes "
                            + "a receiver takes"
                    )
                }
                files.append(File(components: components, name: name, size: size))
            case .directory:
                guard depth + 2 <= ResourcePlacement.maximumDepth else {
                    // A file in it would be too deep; an empty tree that deep is refused all the same.
                    throw Self.tooDeep(name)
                }
                let child = try Platform.openDirectory(entry, in: directory)
                defer { Platform.close(child) }
                try visit(child, path: components, name: name, depth: depth + 1)
            case .other:
                continue
            }
        }
    }

    private static func tooDeep(_ name: String) -> ResourcePlacement.Refusal {
        ResourcePlacement.Refusal(
            description: "\(name) is deeper than the \(ResourcePlacement.maximumDepth) components a receiver takes"
        )
    }
}
