import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// The writer's files: the partial file it opens or resumes, its record, and the final name.
extension FileWriter {
    /// A partial file opened for a transfer.
    struct OpenedPartial {
        let descriptor: SystemPackage.FileDescriptor
        let path: String
        /// The digests of the blocks it holds already, by index.
        let kept: [Int: [UInt8]]
        /// Whether a resume record of it is on disk (it was kept by an earlier transfer).
        let hasRecord: Bool
    }

    /// A kept partial file of this resource from this peer, with the blocks that still hash as they
    /// did (hashed again with ``digestKind`` unless this process kept their digests of that kind); or a
    /// new, empty one.
    func openPartial(layout: ResourceLayout) throws -> OpenedPartial {
        if limits.keepsAnything, let entry = store.claim(storeKey, limits: limits)?.kept.file {
            if let descriptor = try? SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(entry.partialPath),
                .readWrite,
                options: [.noFollow, .closeOnExec]
            ) {
                let kept =
                    entry.digests(of: digestKind)
                    ?? ResourceFileIO.hashBlocks(entry.record.blocks, of: descriptor, layout: layout, kind: digestKind)
                return OpenedPartial(descriptor: descriptor, path: entry.partialPath, kept: kept, hasRecord: true)
            }
            PartialResourceStore.remove(entry.partialPath)
        }
        let (descriptor, path) = try PartialResourceStore.createPartial(in: directoryPath)
        return OpenedPartial(descriptor: descriptor, path: path, kept: [:], hasRecord: false)
    }

    func record(of ledger: ResourceBlockLedger) -> PartialResourceRecord {
        PartialResourceRecord(
            peer: peer.id,
            name: rawName,
            size: size,
            blockLength: ledger.layout.blockLength,
            blocks: ledger.heldBlocks,
            saved: Date()
        )
    }

    /// Moves the partial file to the first free candidate name (a path below the directory for a name
    /// with "/", see ``ResourcePlacement``); never replaces an existing file.
    func place(_ partial: String) throws -> URL {
        try ResourcePlacement.place(partial, named: rawName, inDirectoryAt: directoryPath)
    }
}
