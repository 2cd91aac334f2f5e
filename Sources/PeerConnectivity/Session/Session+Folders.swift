import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

extension Session {
    /// Sends the regular files of the folder at `url` as one transfer (``sendResource(at:withName:toPeer:)``
    /// says what is sent and what is skipped): to a peer that reads folder channels, as one resource of kind
    /// ``ChannelKind/folder`` (``FolderStreamSource``); else each file as a resource named
    /// `<name>/<path below the folder>` (``FolderSender``).
    func sendFolder(at url: URL, withName name: String, toPeer peer: PeerID) throws -> ResourceTransfer {
        guard (1...WireProtocol.maximumChannelNameLength).contains(name.utf8.count) else {
            throw TransferError.nameTooLong(peer: peer, name: name)
        }
        _ = try runtime.connection(to: peer)
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
        // An empty folder goes the per-file way: it succeeds at once, and the peer sees nothing.
        if !tree.files.isEmpty, configuration.sendsFoldersWhole, runtime.peerReadsFolders(peer) {
            return try sendResource(withName: name, toPeer: peer, kind: .folder) {
                let source = FolderStreamSource(tree: tree, root: root, name: name, peer: peer)
                return (source, source.size)
            }
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
