import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

extension Session {
    /// Sends the regular files of the folder at `url`, each as a resource named
    /// `<name>/<path below the folder>`, as one transfer (``sendResource(at:withName:toPeer:)`` says what
    /// is sent and what is skipped).
    func sendFolder(at url: URL, withName name: String, toPeer peer: PeerID) throws -> ResourceTransfer {
        guard (1...WireProtocol.maximumChannelNameLength).contains(name.utf8.count) else {
            throw TransferError.nameTooLong(peer: peer, name: name)
        }
        _ = try core.connection(to: peer)
        let root: Int32
        do {
            root = try Platform.openDirectory(atPath: url.path)
        } catch {
            throw TransferError.failed(peer: peer, name: name, detail: "\(error)")
        }
        let tree: FolderTree
        do {
            tree = try FolderTree(root: root, name: name)
        } catch {
            Platform.close(root)
            throw TransferError.failed(peer: peer, name: name, detail: "\(error)")
        }
        let progress = Progress(totalUnitCount: Int64(clamping: tree.totalBytes))
        let blocks = tree.files.reduce(0) { $0 + ResourceLayout(size: $1.size).blockCount }
        let transfers = FolderTransfers(blocks: blocks)
        let sender = FolderSender(
            session: self,
            root: root,
            tree: tree,
            name: name,
            peer: peer,
            progress: progress,
            transfers: transfers
        )
        let task = Task { try await sender.run() }
        progress.cancellationHandler = { task.cancel() }
        return ResourceTransfer(name: name, peer: peer, progress: progress, task: task) { transfers.statistics }
    }
}
