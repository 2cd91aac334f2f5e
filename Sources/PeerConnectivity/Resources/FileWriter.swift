import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// Writes a received resource, one file, for its ``BlockReceiver``: opens a hidden partial file (one
/// kept from an earlier attempt, its blocks hashed again, or a new one), writes each block's chunks at
/// the block's place in it, checks each block's digest (of the link's ``BlockDigestKind``) as its last
/// byte lands, and at END checks
/// the root digest (SHA-256 over the block digests) and moves the file to its final name.
///
/// Each chunk is hashed right after it is written, while it is in the cache (the hash costs a few percent
/// of the write). Blocks may come in any order. A transfer that fails with blocks checked (the
/// connection closed, a block did not match, a write failed) keeps them in the ``PartialResourceStore``
/// for the sender to resume; one cancelled, short of blocks, or whose root does not match keeps nothing.
struct FileWriter: BlockWriter {
    let name: String
    let peer: PeerID
    let rawName: [UInt8]
    let size: UInt64
    /// The receive directory's path, asked of its URL once: a small file of a folder would pay for it
    /// several times.
    let directoryPath: String
    let storeKey: PartialResourceStore.Key
    let limits: PartialResourceStore.Limits
    let store: PartialResourceStore
    /// The hash of the block digests, as the link to the peer agreed.
    let digestKind: BlockDigestKind

    private var descriptor: SystemPackage.FileDescriptor?
    private var partialPath: String?
    private var ledger: ResourceBlockLedger
    /// The block being written, hashed chunk by chunk as each is written.
    private var blockHasher: BlockHasher
    /// When the resume record is next written.
    private var recordSchedule = ResumeRecordSchedule()
    /// Whether the partial file has a record on disk, to remove with it (a small file never has one,
    /// and removing a name that is not there still takes the directory's lock).
    private var hasRecord = false
    /// What the file asks of the page cache as it grows.
    private var pageCache = PageCacheAdvisor()

    /// A writer for the resource OPEN announced, from `peer`, into `directory`, checking blocks with
    /// digests of `digestKind` and keeping what a failed transfer checked within `limits`.
    init(
        open: Frame.Open,
        peer: PeerID,
        directory: URL,
        digestKind: BlockDigestKind,
        limits: PartialResourceStore.Limits,
        store: PartialResourceStore = .shared
    ) {
        self.digestKind = digestKind
        self.blockHasher = BlockHasher(digestKind)
        self.name = String(decoding: open.name, as: UTF8.self)
        self.rawName = open.name
        self.peer = peer
        self.size = open.size
        self.directoryPath = directory.path
        self.storeKey = PartialResourceStore.Key(
            directory: directoryPath,
            peer: peer.id,
            name: open.name,
            size: open.size
        )
        self.limits = limits
        self.store = store
        self.ledger = ResourceBlockLedger(layout: ResourceLayout(size: open.size))
    }

    mutating func open() throws(BlockWriteFailure) -> (have: Frame.Have, resumed: UInt64) {
        let layout = ResourceLayout(size: size)
        let opened: OpenedPartial
        do {
            opened = try openPartial(layout: layout)
        } catch {
            throw failed("\(error)")
        }
        descriptor = opened.descriptor
        partialPath = opened.path
        hasRecord = opened.hasRecord
        ledger = ResourceBlockLedger(layout: layout, kept: opened.kept)
        let held = ledger.heldBlocks
        guard !held.isEmpty else { return (.nothing, 0) }
        let have = Frame.Have(digest: ResourceFileIO.heldDigest(ledger.heldDigests), bitmap: layout.bitmap(of: held))
        return (have, ledger.heldBytes)
    }

    mutating func blockStarted(_ index: Int, digest: [UInt8]) throws(BlockWriteFailure) -> UInt64 {
        guard descriptor != nil else { return 0 }
        let held = ledger.isHeld(index)
        guard ledger.blockStarted(index, digest: digest) != nil else {
            throw failed("block \(index) came again before its first copy was checked")
        }
        blockHasher = BlockHasher(digestKind)
        return held ? UInt64(ledger.layout.length(of: index)) : 0
    }

    mutating func received(_ bytes: ByteBuffer) throws(BlockWriteFailure) -> (progressed: Int, checked: Int) {
        guard let descriptor else { return (0, 0) }
        let (offset, completes) = ledger.chunkArrived(length: bytes.readableBytes)
        do {
            // Hashed right after it is written, while it is in this thread's cache.
            try bytes.withUnsafeReadableBytes { buffer in
                try ResourceFileIO.write(buffer, at: offset, to: descriptor)
                blockHasher.update(buffer)
            }
        } catch let failure as POSIXFailure where failure.isNoSpace {
            throw .noSpace(failure, peer: peer, name: name)
        } catch {
            throw BlockWriteFailure(
                code: .failed,
                error: .failed(peer: peer, name: name, detail: "writing: \(error)"),
                keep: true
            )
        }
        pageCache.wrote(upTo: offset + UInt64(bytes.readableBytes), descriptor: descriptor)
        guard completes else { return (bytes.readableBytes, 0) }
        let index = ledger.layout.blockIndex(containing: offset)
        let digest = blockHasher.finalize()
        blockHasher = BlockHasher(digestKind)
        switch ledger.blockHashed(index, digest) {
        case .mismatch:
            throw BlockWriteFailure(code: .blockMismatch, error: .digestMismatch(peer: peer, name: name), keep: true)
        case .verified:
            saveRecordIfDue()
        case nil:
            break
        }
        return (bytes.readableBytes, ledger.layout.length(of: index))
    }

    mutating func ended(root: [UInt8]?) throws(BlockWriteFailure) -> URL {
        guard let path = partialPath else { throw failed("no partial file to place") }
        switch ledger.outcomeAtEnd {
        case .missing(let blocks):
            let detail = "\(blocks.count) blocks never arrived (the first: \(blocks[0]))"
            throw BlockWriteFailure(
                code: .sizeMismatch,
                error: .sizeMismatch(peer: peer, name: name, detail: detail),
                keep: false
            )
        case .whole(let digests):
            let computed = ResourceFileIO.digest(of: ResourceLayout(size: size).rootInput(digests: digests))
            guard computed == root else {
                throw BlockWriteFailure(
                    code: .digestMismatch,
                    error: .digestMismatch(peer: peer, name: name),
                    keep: false
                )
            }
            let url: URL
            do {
                url = try place(path)
            } catch {
                throw failed("\(error)")
            }
            // The partial name went with the move; a record kept for a resume is left to remove.
            partialPath = nil
            if hasRecord { PartialResourceStore.removeRecord(of: path) }
            return url
        }
    }

    mutating func finish(keep: Bool) {
        try? descriptor?.close()
        descriptor = nil
        guard let partial = partialPath else { return }
        partialPath = nil
        if keep {
            let kept = PartialResourceStore.KeptFile(
                partialPath: partial,
                record: record(of: ledger),
                digests: ledger.heldByIndex,
                digestKind: digestKind
            )
            store.keep(.file(kept), in: directoryPath, limits: limits)
        } else {
            PartialResourceStore.remove(partial, withRecord: hasRecord)
        }
    }

    /// A block was checked: writes the resume record when ``ResumeRecordSchedule`` says it is due, so
    /// that a process that stops can resume what it had.
    private mutating func saveRecordIfDue() {
        guard limits.keepsAnything, recordSchedule.blockChecked(at: .now), let path = partialPath else { return }
        hasRecord = true
        store.save(record(of: ledger), partialPath: path)
    }

    /// A failure that keeps nothing.
    private func failed(_ detail: String) -> BlockWriteFailure {
        BlockWriteFailure(code: .failed, error: .failed(peer: peer, name: name, detail: detail), keep: false)
    }
}
