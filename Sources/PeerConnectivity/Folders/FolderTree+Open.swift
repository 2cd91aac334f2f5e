import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

extension FolderTree {
    /// Opens a file of the folder open as `root` for reading, through no symbolic link, and only if it
    /// is still a regular file: its whole path below the folder in one step where the system can, else
    /// each directory on it relative to the one before (which also says what is in the way).
    ///
    /// - Returns: the descriptor and the file's length now.
    /// - Throws: ``TransferError/failed(peer:name:detail:)`` naming `name`.
    static func open(
        _ file: File,
        in root: Int32,
        peer: PeerID,
        name: String
    ) throws -> (SystemPackage.FileDescriptor, UInt64) {
        var directory = root
        defer { if directory != root { Platform.close(directory) } }
        do {
            let descriptor: Int32
            if let opened = Platform.openBeneath(file.components, in: root, isDirectory: false) {
                descriptor = opened
            } else {
                for component in file.components.dropLast() {
                    let inner = try Platform.openDirectory(component, in: directory)
                    if directory != root { Platform.close(directory) }
                    directory = inner
                }
                descriptor = try Platform.openFileForReading(file.components[file.components.count - 1], in: directory)
            }
            let kind: Platform.EntryKind
            do {
                kind = try Platform.entryKind(of: descriptor)
            } catch {
                Platform.close(descriptor)
                throw error
            }
            guard case .regular(let size) = kind else {
                Platform.close(descriptor)
                throw TransferError.failed(peer: peer, name: name, detail: "\(file.name) is no longer a regular file")
            }
            return (SystemPackage.FileDescriptor(rawValue: descriptor), size)
        } catch let error as SystemCallError {
            let detail = error.isNotDirectory ? "a symbolic link took the place of a file or folder" : "\(error)"
            throw TransferError.failed(peer: peer, name: name, detail: "\(file.name): \(detail)")
        }
    }
}
