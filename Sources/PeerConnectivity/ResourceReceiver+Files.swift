import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// The receiver's files: the partial file it opens or resumes, its record, and the final name.
extension ResourceReceiver {
    /// A kept partial file of this resource from this peer, with the blocks that still hash as they
    /// did; or a new, empty one.
    func openPartial(
        layout: ResourceLayout
    ) throws -> (SystemPackage.FileDescriptor, String, [Int: [UInt8]]) {
        if limits.keepsAnything,
            let entry = store.claim(
                in: directory,
                peer: peer.id,
                name: rawName,
                size: size,
                blockLength: layout.blockLength,
                limits: limits
            )
        {
            if let descriptor = try? SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(entry.partialPath),
                .readWrite,
                options: [.noFollow, .closeOnExec]
            ) {
                let kept =
                    entry.digests ?? ResourceFileIO.hashBlocks(entry.record.blocks, of: descriptor, layout: layout)
                return (descriptor, entry.partialPath, kept)
            }
            PartialResourceStore.remove(entry.partialPath)
        }
        let path = directory.appendingPathComponent(".partial-\(UUID().uuidString)").path
        do {
            let descriptor = try SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(path),
                .readWrite,
                options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
            return (descriptor, path, [:])
        } catch {
            throw POSIXFailure("open \(path)", (error as? SystemPackage.Errno) ?? .ioError)
        }
    }

    var storeKey: PartialResourceStore.Key {
        PartialResourceStore.Key(directory: directory.path, peer: peer.id, name: rawName, size: size)
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

    /// Links the partial file to the first free candidate name (a path below the directory for a name
    /// with "/", see ``ResourcePlacement``); never replaces an existing file.
    func place(_ partial: String) throws -> URL {
        try ResourcePlacement.place(partial, named: rawName, in: directory)
    }

    /// Asks the page cache what ``WriteBehind`` advises. Advice only: a failure is ignored, as it
    /// changes nothing but what stays cached.
    static func advise(_ advice: WriteBehind.Advice, descriptor: SystemPackage.FileDescriptor) {
        if let range = advice.startWriteback {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
        if let range = advice.dropFromCache {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
    }
}
