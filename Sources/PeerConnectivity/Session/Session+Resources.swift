import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

extension Session {
    /// Sends a file to a connected peer, as MPC's `sendResource(at:withName:toPeer:withCompletionHandler:)`.
    ///
    /// Returns at once; the file is read from disk in blocks while it goes (never loaded whole), beside
    /// messages and streams on the same connection, which it does not hold up. The peer receives it into
    /// a partial file, checks each 1 MiB block's digest as it lands and the root digest over them at
    /// the end, and only then gives it its final name
    /// (``SessionEvent/startedReceivingResource(name:from:progress:)`` and
    /// ``SessionEvent/finishedReceivingResource(name:from:result:)`` there). Several resources may be
    /// in flight at once, to one peer or to several.
    ///
    /// When an earlier transfer of the same file (same name, same length, from this peer's
    /// ``PeerID``) was interrupted, the peer keeps the blocks it checked (for
    /// ``Configuration/partialResourceLifetime``), and only the others cross: the progress starts at the
    /// bytes resumed, which its `userInfo` holds under ``Foundation/ProgressUserInfoKey/resumedByteCountKey``.
    /// A block the peer finds damaged is sent again. With ``Configuration/reconnection`` on, a transfer
    /// whose link drops goes on once the link is resumed, from the blocks the peer kept.
    ///
    /// A name with "/" names a path below the peer's ``Configuration/resourceDirectory``: the peer makes
    /// the missing folders (never through a symbolic link, never outside that directory) and gives each
    /// component a safe name as it does a file name (docs/PROTOCOL.md, "Resource names").
    ///
    /// **A folder.** When `url` is a directory, its tree is sent, so the peer rebuilds it under `name`.
    /// The folder is listed before this returns (one `stat` per entry), without following any symbolic
    /// link: symbolic links, sockets, FIFOs and devices inside it are skipped, and so are empty folders
    /// (a folder with no regular file sends nothing and succeeds). To a peer of this version (with
    /// ``Configuration/sendsFoldersWhole`` on, the default) the tree is one resource: its files one after
    /// the other on one channel, checked in blocks and gathered in a hidden staging directory; the peer
    /// sees one started and one finished event named `name`, whose URL is the folder, which appears in
    /// its receive directory whole, in one rename, just before that event (a folder that fails never
    /// appears there). The `progress` then counts
    /// the files' bytes and, for each file, a header of 10 bytes and its path. A folder cut short resumes
    /// as a file does, from the blocks the peer took. To an older peer, or with whole folders off, each
    /// regular file is a resource named `<name>/<path below the folder>`, several at once: the peer sees
    /// one resource per file, the `progress` counts the files' bytes as the peer keeps each, and each
    /// file resumes as a resource does. Either way cancelling the `progress` cancels the folder, `wait()`
    /// throws its first failure, and a hidden name (".git") arrives without its dots.
    ///
    /// - Parameters:
    ///   - url: a local regular file, or a directory.
    ///   - name: the name the peer sees (it makes its own safe file name or path from it), 1 to 16,384
    ///     bytes of UTF-8.
    ///   - peer: a connected peer.
    /// - Returns: the transfer: its `progress`, and `wait()` for the outcome.
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)``; ``TransferError`` when the name is too
    ///   long or the file cannot be opened, or when a folder cannot be listed or holds a path deeper than
    ///   32 components or longer than 1,024 bytes (its name included).
    public func sendResource(at url: URL, withName name: String, toPeer peer: PeerID) throws -> ResourceTransfer {
        if FolderTree.isDirectory(url) { return try sendFolder(at: url, withName: name, toPeer: peer) }
        return try sendResource(withName: name, toPeer: peer) {
            let (descriptor, size) = try Self.openFile(url, peer: peer, name: name)
            return (FileResourceSource(descriptor: descriptor), size)
        }
    }

    /// Sends what `open` opens (it returns the source, which the transfer closes, and its length): a
    /// file, or with `kind` ``ChannelKind/folder`` a folder stream.
    func sendResource(
        withName name: String,
        toPeer peer: PeerID,
        kind: ChannelKind = .resource,
        open: () throws -> (any ResourceSource, UInt64)
    ) throws -> ResourceTransfer {
        let nameBytes = Array(name.utf8)
        guard (1...WireProtocol.maximumChannelNameLength).contains(nameBytes.count) else {
            throw TransferError.nameTooLong(peer: peer, name: name)
        }
        let connection = try runtime.connection(to: peer)
        let (source, size) = try open()
        guard ResourceLayout(size: size).fitsProtocol else {
            source.close()
            let detail = "\(size) bytes; a resource has at most \(WireProtocol.maximumResourceBlocks) blocks of 1 MiB"
            throw TransferError.failed(peer: peer, name: name, detail: detail)
        }
        let channel: ResourceSendRecord
        let digestKind = runtime.blockDigestKind(peer)
        do {
            channel = ResourceSendRecord(
                connection,
                try connection.openChannel(kind: kind, size: size, name: nameBytes),
                blocks: ResourceLayout(size: size).blockCount,
                digestKind: digestKind
            )
        } catch let error as ConnectionClosedError {
            source.close()
            throw SessionError.peerNotConnected(peer, reason: error.reason)
        }
        let progress = Progress(totalUnitCount: Int64(clamping: size))
        let runtime = self.runtime
        let sender = ResourceSender(
            source: source,
            size: size,
            kind: kind,
            channel: channel,
            progress: progress,
            name: name,
            peer: peer,
            digestKind: digestKind,
            resumedConnection: { old in try await runtime.resumedConnection(to: peer, replacing: old) }
        )
        let inFlight = runtime.resourcesInFlight
        let key = TransferRegistry.Key.progress(ObjectIdentifier(progress))
        inFlight.started(TransferRecord(name: name, peer: peer, isIncoming: false, progress: progress), key: key)
        let task = Task {
            defer { inFlight.ended(key) }
            try await sender.run()
        }
        progress.cancellationHandler = {
            task.cancel()
            channel.reset(.cancelled)
        }
        if progress.isCancelled {
            task.cancel()
            channel.reset(.cancelled)
        }
        return ResourceTransfer(name: name, peer: peer, progress: progress, task: task) { channel.statistics }
    }

    /// Opens a regular file for reading; returns its descriptor and length.
    private static func openFile(_ url: URL, peer: PeerID, name: String) throws -> (
        SystemPackage.FileDescriptor, UInt64
    ) {
        let descriptor: SystemPackage.FileDescriptor
        let status: SystemPackage.Stat
        do {
            descriptor = try SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(url.path),
                .readOnly,
                options: [.closeOnExec]
            )
        } catch {
            throw TransferError.failed(peer: peer, name: name, detail: "open \(url.path): \(error)")
        }
        do {
            status = try descriptor.stat()
        } catch {
            try? descriptor.close()
            throw TransferError.failed(peer: peer, name: name, detail: "stat \(url.path): \(error)")
        }
        guard status.type == .regular else {
            try? descriptor.close()
            throw TransferError.failed(peer: peer, name: name, detail: "\(url.path) is not a regular file")
        }
        return (descriptor, UInt64(status.size))
    }
}
