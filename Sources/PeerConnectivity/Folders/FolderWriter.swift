import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// Writes a folder received as one channel (``ChannelKind/folder``) into the receive directory, for its
/// ``BlockReceiver``: takes
/// the folder stream's blocks in order, checks each block's digest once it is whole, and only then
/// reads the entries in it (``FolderStreamParser``); admits each entry against the disk
/// (``FolderBudget``) before its file is made, writes it to a hidden partial file and moves it to its
/// path in the folder's hidden staging directory (`.partial-<id>.d` in the receive directory) as its
/// last byte is written. At END, once every block and the root hold, the staging directory is moved to
/// the folder's name in one rename (``ResourcePlacement/placeFolder(_:named:inDirectoryAt:)``): the
/// application sees the folder whole or not at all.
///
/// Nothing of a block is written before its digest holds. A folder that ends early is removed with its
/// staging directory (``abandon()``), unless it has blocks taken and is kept (``PartialResourceStore``),
/// staging directory and all, with its file closed, and offered to the sender when it sends the folder
/// again (``have()``): the
/// sender then goes on from the next block, or sends from block 0 if its folder differs, and the writer
/// starts again (``blockStarted(_:digest:)``), removing what it staged. Called on one queue at a time.
struct FolderWriter: BlockWriter {

    /// The file being written.
    private struct OpenFile {
        let descriptor: SystemPackage.FileDescriptor
        let partialPath: String
        /// Its path in the folder, as sent.
        let name: [UInt8]
        var written: UInt64 = 0
        /// What it asks of the page cache as it grows.
        var pageCache = PageCacheAdvisor()
    }

    /// The block being received.
    private struct Block {
        let index: Int
        let digest: [UInt8]
        var remaining: Int
        var buffers: [ByteBuffer] = []
        /// Hashed chunk by chunk as they arrive, while each is in this thread's cache.
        var hasher: BlockHasher
    }

    let peer: PeerID
    let name: String
    /// The hash of the block digests, as the link to the peer agreed.
    let digestKind: BlockDigestKind
    private let rawName: [UInt8]
    private let directoryPath: String
    private let layout: ResourceLayout
    private var parser: FolderStreamParser
    private var block: Block?
    private var digests: [[UInt8]] = []
    private var file: OpenFile?
    /// The hidden directory the folder's files are placed in until it is whole; made with its first file.
    private var stagingPath: String?
    /// What the folder's files may still take of the disk; set when the transfer starts.
    var budget = FolderBudget.unlimited
    /// The blocks offered to the sender in HAVE when this writer was taken up again; 0 for a new one.
    private var offered = 0
    /// How long and how much of a folder cut short is kept for a resume.
    let limits: PartialResourceStore.Limits

    /// A writer for the folder OPEN announced, into the directory at `directoryPath`, checking blocks
    /// with digests of `digestKind`, kept within `limits` if it is cut short.
    init(
        open: Frame.Open,
        peer: PeerID,
        directoryPath: String,
        maximumEntries: Int,
        digestKind: BlockDigestKind,
        limits: PartialResourceStore.Limits
    ) {
        self.peer = peer
        self.digestKind = digestKind
        self.limits = limits
        self.rawName = open.name
        self.name = String(decoding: open.name, as: UTF8.self)
        self.directoryPath = directoryPath
        self.layout = ResourceLayout(size: open.size)
        self.parser = FolderStreamParser(size: open.size, maximumEntries: maximumEntries)
        digests.reserveCapacity(layout.blockCount)
    }

    /// Takes up a folder kept on disk (``FolderRecord``), reopening the file it was writing.
    ///
    /// - Returns: `nil` when the record does not hold, its digests are not of `digestKind` (its blocks
    ///   cannot be hashed again), or its file cannot be opened as it was left.
    init?(
        restoring record: FolderRecord,
        peer: PeerID,
        directoryPath: String,
        digestKind: BlockDigestKind,
        limits: PartialResourceStore.Limits
    ) {
        guard record.isValid(in: directoryPath), (record.digestKind ?? .xxh64) == digestKind else { return nil }
        self.peer = peer
        self.digestKind = digestKind
        self.limits = limits
        self.rawName = record.name
        self.name = String(decoding: record.name, as: UTF8.self)
        self.directoryPath = directoryPath
        self.layout = ResourceLayout(size: record.size)
        self.parser = record.parser
        self.digests = record.digests
        guard let staging = record.stagingPath, (try? Self.kind(ofEntryAt: staging)) == .directory else { return nil }
        self.stagingPath = staging
        if let kept = record.file {
            guard
                let descriptor = try? SystemPackage.FileDescriptor.open(
                    SystemPackage.FilePath(kept.partialPath),
                    .readWrite,
                    options: [.noFollow, .closeOnExec]
                )
            else { return nil }
            guard let status = try? descriptor.stat(), status.type == .regular, UInt64(status.size) == kept.written
            else {
                try? descriptor.close()
                return nil
            }
            file = OpenFile(
                descriptor: descriptor,
                partialPath: kept.partialPath,
                name: kept.name,
                written: kept.written
            )
        }
    }

    /// What to keep on disk of this folder, received from `peer`, for a resume after a restart.
    func record(peer: UUID) -> FolderRecord {
        FolderRecord(
            peer: peer,
            name: rawName,
            size: layout.size,
            digests: digests,
            digestKind: digestKind,
            parser: parser,
            file: file.map { FolderRecord.OpenFile(partialPath: $0.partialPath, name: $0.name, written: $0.written) },
            stagingPath: stagingPath,
            saved: Date()
        )
    }

    /// The blocks taken so far (all before the next one due) and their bytes.
    var taken: (count: Int, bytes: UInt64) { (digests.count, layout.bytes(in: 0..<digests.count)) }

    var storeKey: PartialResourceStore.Key {
        PartialResourceStore.Key(
            directory: directoryPath,
            peer: peer.id,
            name: rawName,
            size: layout.size,
            isFolder: true
        )
    }

    /// Takes up the folder kept from an earlier transfer (``PartialResourceStore``), if any, in place of
    /// this new one, and sizes the disk the folder's files may take.
    mutating func open() -> (have: Frame.Have, resumed: UInt64) {
        if limits.keepsAnything, let entry = PartialResourceStore.shared.claim(storeKey, limits: limits),
            case .folder(let record) = entry.kept
        {
            if let kept = FolderWriter(
                restoring: record,
                peer: peer,
                directoryPath: directoryPath,
                digestKind: digestKind,
                limits: limits
            ) {
                // Its record goes: it is written again if the folder is kept again.
                Platform.unlink(entry.recordPath)
                self = kept
            } else {
                entry.discard()
            }
        }
        budget = Self.budget(in: directoryPath)
        let have = have()
        return (have, taken.bytes)
    }

    /// HAVE for a sender sending the folder again: the blocks taken, to go on after them. A block that was
    /// arriving when the folder ended is dropped (nothing of it was written).
    mutating func have() -> Frame.Have {
        block = nil
        offered = digests.count
        guard offered > 0 else { return .nothing }
        return Frame.Have(digest: ResourceFileIO.heldDigest(digests), bitmap: layout.bitmap(of: 0..<offered))
    }

    /// BLOCK: the next block, with its digest. Blocks come in order, from the first not taken; block 0
    /// after blocks were offered means the sender's folder differs: the writer starts again.
    ///
    /// - Returns: the bytes offered when it starts again, else 0.
    mutating func blockStarted(_ index: Int, digest: [UInt8]) throws(BlockWriteFailure) -> UInt64 {
        var recounted: UInt64 = 0
        if index == 0, offered > 0, block == nil {
            recounted = layout.bytes(in: 0..<offered)
            restart()
        }
        guard block == nil, index == digests.count else {
            throw failed("block \(index) came where block \(digests.count) was due")
        }
        block = Block(
            index: index,
            digest: digest,
            remaining: layout.length(of: index),
            hasher: BlockHasher(digestKind)
        )
        return recounted
    }

    /// Forgets the stream read so far; the file being written and the files staged are removed.
    private mutating func restart() {
        abandon()
        parser = FolderStreamParser(size: parser.size, maximumEntries: parser.maximumEntries)
        digests.removeAll(keepingCapacity: true)
        budget = FolderBudget(freeInodes: budget.freeInodes, freeBytes: budget.freeBytes)
        offered = 0
    }

    /// A chunk of the current block (the channel table lets no more than the block's length through).
    ///
    /// - Returns: the block's length, twice, once it is whole, checked and written (a folder's progress
    ///   counts whole blocks); else zeros.
    mutating func received(_ bytes: ByteBuffer) throws(BlockWriteFailure) -> (progressed: Int, checked: Int) {
        guard var current = block, bytes.readableBytes <= current.remaining else {
            throw failed("bytes outside a block")
        }
        // Out of `block` while it changes, so that its list of chunks is not copied for each one.
        block = nil
        current.remaining -= bytes.readableBytes
        current.buffers.append(bytes)
        bytes.withUnsafeReadableBytes { current.hasher.update($0) }
        guard current.remaining == 0 else {
            block = current
            return (0, 0)
        }
        guard current.hasher.finalize() == current.digest else {
            // The blocks before it were checked and written: they stay for a resume.
            throw BlockWriteFailure(code: .blockMismatch, error: .digestMismatch(peer: peer, name: name), keep: true)
        }
        digests.append(current.digest)
        for buffer in current.buffers { try take(buffer) }
        let length = layout.length(of: current.index)
        return (length, length)
    }

    /// END: every block must have come, the stream must end between entries, and the root must hold;
    /// then the folder moves from its staging directory to its name.
    ///
    /// - Returns: the folder's URL.
    mutating func ended(root: [UInt8]?) throws(BlockWriteFailure) -> URL {
        guard block == nil, digests.count == layout.blockCount else {
            let detail = "\(layout.blockCount - digests.count) blocks never arrived"
            throw BlockWriteFailure(
                code: .sizeMismatch,
                error: .sizeMismatch(peer: peer, name: name, detail: detail),
                keep: false
            )
        }
        do {
            try parser.finish()
        } catch {
            throw failed("\(error)")
        }
        guard ResourceFileIO.digest(of: layout.rootInput(digests: digests)) == root else {
            throw BlockWriteFailure(code: .digestMismatch, error: .digestMismatch(peer: peer, name: name), keep: false)
        }
        guard let staging = stagingPath else { throw failed("a folder with no file") }
        let url: URL
        do {
            url = try ResourcePlacement.placeFolder(staging, named: rawName, inDirectoryAt: directoryPath)
        } catch {
            throw failed("placing the folder: \(error)")
        }
        stagingPath = nil
        return url
    }

    /// Keeps the folder for a resume (``PartialResourceStore``), its file closed, when `keep` and it
    /// has blocks taken; else removes what it wrote (``abandon()``).
    mutating func finish(keep: Bool) {
        guard keep, taken.count > 0, limits.keepsAnything else {
            abandon()
            return
        }
        let record = record(peer: peer.id)
        closeFile()
        PartialResourceStore.shared.keep(.folder(record), in: directoryPath, limits: limits)
    }

    /// Closes the file being written, leaving it and the staging directory on disk (for a record of them
    /// to take them up again).
    private mutating func closeFile() {
        guard let open = file else { return }
        file = nil
        try? open.descriptor.close()
    }

    /// The folder ends early: the file being written is closed and removed, and the staging directory
    /// with every file placed in it.
    mutating func abandon() {
        if let open = file {
            file = nil
            try? open.descriptor.close()
            PartialResourceStore.remove(open.partialPath, withRecord: false)
        }
        if let staging = stagingPath {
            stagingPath = nil
            Platform.removeTree(atPath: staging)
        }
    }

    // MARK: - Entries

    /// Reads a checked block's bytes as entries, and writes them.
    private mutating func take(_ buffer: ByteBuffer) throws(BlockWriteFailure) {
        // The parser is taken out while its events write files (which change the rest of the writer).
        var parser = self.parser
        defer { self.parser = parser }
        do {
            try parser.parse(buffer) { event in
                switch event {
                case .entryStarted(let path, let length):
                    try startFile(path, length: length)
                case .bytes(let bytes):
                    try write(bytes)
                case .entryEnded:
                    try placeFile()
                }
            }
        } catch let failure as BlockWriteFailure {
            throw failure
        } catch let error as FolderStreamError where error.isOverLimit {
            throw BlockWriteFailure(
                code: .tooLarge,
                error: .refused(peer: peer, name: name, detail: "\(error)"),
                keep: false
            )
        } catch let error as FolderStreamError {
            throw failed("\(error)")
        } catch let refusal as FolderBudget.Refusal {
            let code: ChannelResetCode
            switch refusal {
            case .tooManyEntries: code = .tooLarge
            case .noSpace: code = .noSpace
            }
            throw BlockWriteFailure(
                code: code,
                error: .refused(peer: peer, name: name, detail: "\(refusal)"),
                keep: false
            )
        } catch let failure as POSIXFailure where failure.isNoSpace {
            throw .noSpace(failure, peer: peer, name: name)
        } catch {
            throw failed("\(error)")
        }
    }

    private mutating func startFile(_ path: [UInt8], length: UInt64) throws {
        // Refused here, before anything is written, when the path is too deep or too long where the
        // folder lands, or the disk has no room for it.
        _ = try ResourcePlacement.components(of: rawName + [UInt8(ascii: "/")] + path)
        try budget.admit(length: length)
        if stagingPath == nil { stagingPath = try Self.makeStaging(in: directoryPath) }
        let (descriptor, partial) = try PartialResourceStore.createPartial(in: directoryPath)
        file = OpenFile(descriptor: descriptor, partialPath: partial, name: path)
    }

    private mutating func write(_ bytes: ByteBuffer) throws {
        guard var open = file else { return }
        try bytes.withUnsafeReadableBytes { try ResourceFileIO.write($0, at: open.written, to: open.descriptor) }
        open.written += UInt64(bytes.readableBytes)
        open.pageCache.wrote(upTo: open.written, descriptor: open.descriptor)
        file = open
    }

    private mutating func placeFile() throws {
        guard let open = file else { return }
        file = nil
        try? open.descriptor.close()
        guard let staging = stagingPath else { return }
        do {
            _ = try ResourcePlacement.place(open.partialPath, named: open.name, inDirectoryAt: staging)
        } catch {
            PartialResourceStore.remove(open.partialPath, withRecord: false)
            throw error
        }
    }

    private func failed(_ detail: String) -> BlockWriteFailure {
        BlockWriteFailure(code: .failed, error: .failed(peer: peer, name: name, detail: detail), keep: false)
    }
}
