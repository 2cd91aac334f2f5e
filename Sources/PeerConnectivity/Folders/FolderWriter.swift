import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// Writes a folder received as one channel (``ChannelKind/folder``) into the receive directory: takes
/// the folder stream's blocks in order, checks each block's digest once it is whole, and only then
/// reads the entries in it (``FolderStreamParser``); writes each file to a hidden partial file and
/// moves it to its place (``ResourcePlacement``) as its last byte is written. END's root digest is
/// checked over all the blocks.
///
/// Nothing of a block is written before its digest holds; a file placed stays placed when a later block
/// fails. A folder that ends early with blocks taken may be kept (``KeptFolders``) and offered to the
/// sender when it sends the folder again (``have``): the sender then goes on from the next block, or
/// sends from block 0 if its folder differs, and the writer starts again (``blockStarted(_:digest:)``),
/// leaving what it placed. Called on one queue at a time (``FolderReceiver``).
struct FolderWriter {
    /// Why the folder ends early: the RESET code for the sender, and the error for this side.
    struct Failure: Error {
        let code: ChannelResetCode
        let error: TransferError
    }

    /// The file being written.
    private struct OpenFile {
        let descriptor: SystemPackage.FileDescriptor
        let partialPath: String
        /// The name it is placed under: the folder's name, "/", its path.
        let name: [UInt8]
        var written: UInt64 = 0
        var writeBehind = WriteBehind()
    }

    /// The block being received.
    private struct Block {
        let index: Int
        let digest: [UInt8]
        var remaining: Int
        var buffers: [ByteBuffer] = []
        /// Hashed chunk by chunk as they arrive, while each is in this thread's cache.
        var hasher = BlockHasher()
    }

    let peer: PeerID
    let name: String
    private let rawName: [UInt8]
    private let directoryPath: String
    private let layout: ResourceLayout
    private var parser: FolderStreamParser
    private var block: Block?
    private var digests: [[UInt8]] = []
    private var file: OpenFile?
    /// Where the folder landed (its first file's first component), once a file is placed.
    private(set) var folderURL: URL?
    /// The blocks offered to the sender in HAVE when this writer was taken up again; 0 for a new one.
    private var offered = 0

    /// A writer for the folder OPEN announced, into the directory at `directoryPath`.
    init(open: Frame.Open, peer: PeerID, directoryPath: String, maximumEntries: Int) {
        self.peer = peer
        self.rawName = open.name
        self.name = String(decoding: open.name, as: UTF8.self)
        self.directoryPath = directoryPath
        self.layout = ResourceLayout(size: open.size)
        self.parser = FolderStreamParser(size: open.size, maximumEntries: maximumEntries)
        digests.reserveCapacity(layout.blockCount)
    }

    /// Takes up a folder kept on disk (``FolderRecord``), reopening the file it was writing.
    ///
    /// - Returns: `nil` when the record does not hold or its file cannot be opened as it was left.
    init?(restoring record: FolderRecord, peer: PeerID, directoryPath: String) {
        guard record.isValid(in: directoryPath) else { return nil }
        self.peer = peer
        self.rawName = record.name
        self.name = String(decoding: record.name, as: UTF8.self)
        self.directoryPath = directoryPath
        self.layout = ResourceLayout(size: record.size)
        self.parser = record.parser
        self.digests = record.digests
        self.folderURL = record.folderPath.map { URL(filePath: $0, directoryHint: .isDirectory) }
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
            parser: parser,
            file: file.map { FolderRecord.OpenFile(partialPath: $0.partialPath, name: $0.name, written: $0.written) },
            folderPath: folderURL?.path,
            saved: Date()
        )
    }

    /// The blocks taken so far (all before the next one due) and their bytes.
    var taken: (count: Int, bytes: UInt64) { (digests.count, layout.bytes(in: 0..<digests.count)) }

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
    /// - Returns: whether it started again.
    mutating func blockStarted(_ index: Int, digest: [UInt8]) throws(Failure) -> Bool {
        var restarted = false
        if index == 0, offered > 0, block == nil {
            restart()
            restarted = true
        }
        guard block == nil, index == digests.count else {
            throw failed("block \(index) came where block \(digests.count) was due")
        }
        block = Block(index: index, digest: digest, remaining: layout.length(of: index))
        return restarted
    }

    /// Forgets the stream read so far; the file being written is removed, the files placed stay.
    private mutating func restart() {
        abandon()
        parser = FolderStreamParser(size: parser.size, maximumEntries: parser.maximumEntries)
        digests.removeAll(keepingCapacity: true)
        folderURL = nil
        offered = 0
    }

    /// A chunk of the current block (the channel table lets no more than the block's length through).
    ///
    /// - Returns: the block's length once it is whole, checked and written; else `nil`.
    mutating func received(_ bytes: ByteBuffer) throws(Failure) -> Int? {
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
            return nil
        }
        guard current.hasher.finalize() == current.digest else {
            throw Failure(code: .blockMismatch, error: .digestMismatch(peer: peer, name: name))
        }
        digests.append(current.digest)
        for buffer in current.buffers { try take(buffer) }
        return layout.length(of: current.index)
    }

    /// END: every block must have come, the stream must end between entries, and the root must hold.
    ///
    /// - Returns: the folder's URL.
    mutating func ended(root: [UInt8]?) throws(Failure) -> URL {
        guard block == nil, digests.count == layout.blockCount else {
            let detail = "\(layout.blockCount - digests.count) blocks never arrived"
            throw Failure(code: .sizeMismatch, error: .sizeMismatch(peer: peer, name: name, detail: detail))
        }
        do {
            try parser.finish()
        } catch {
            throw failed("\(error)")
        }
        guard ResourceFileIO.digest(of: layout.rootInput(digests: digests)) == root else {
            throw Failure(code: .digestMismatch, error: .digestMismatch(peer: peer, name: name))
        }
        guard let folderURL else { throw failed("a folder with no file") }
        return folderURL
    }

    /// Closes the file being written, leaving it on disk (for a record of it to take it up again).
    mutating func closeFile() {
        guard let open = file else { return }
        file = nil
        try? open.descriptor.close()
    }

    /// The folder ends early: the file being written is closed and removed.
    mutating func abandon() {
        guard let open = file else { return }
        file = nil
        try? open.descriptor.close()
        PartialResourceStore.remove(open.partialPath, withRecord: false)
    }

    // MARK: - Entries

    /// Reads a checked block's bytes as entries, and writes them.
    private mutating func take(_ buffer: ByteBuffer) throws(Failure) {
        // The parser is taken out while its events write files (which change the rest of the writer).
        var parser = self.parser
        defer { self.parser = parser }
        do {
            try parser.parse(buffer) { event in
                switch event {
                case .entryStarted(let path, _):
                    try startFile(path)
                case .bytes(let bytes):
                    try write(bytes)
                case .entryEnded:
                    try placeFile()
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch let error as FolderStreamError {
            throw failed("\(error)")
        } catch let failure as POSIXFailure where failure.code == .noSpace || failure.code == .diskQuotaExceeded {
            throw Failure(code: .noSpace, error: .failed(peer: peer, name: name, detail: "writing: \(failure)"))
        } catch {
            throw failed("\(error)")
        }
    }

    private mutating func startFile(_ path: [UInt8]) throws {
        let fullName = rawName + [UInt8(ascii: "/")] + path
        // Refused here, before anything is written, when the path is too deep or too long.
        _ = try ResourcePlacement.components(of: fullName)
        let (descriptor, partial) = try PartialResourceStore.createPartial(in: directoryPath)
        file = OpenFile(descriptor: descriptor, partialPath: partial, name: fullName)
    }

    private mutating func write(_ bytes: ByteBuffer) throws {
        guard var open = file else { return }
        try bytes.withUnsafeReadableBytes { try ResourceFileIO.write($0, at: open.written, to: open.descriptor) }
        open.written += UInt64(bytes.readableBytes)
        ResourceReceiver.advise(open.writeBehind.wrote(upTo: open.written), descriptor: open.descriptor)
        file = open
    }

    private mutating func placeFile() throws {
        guard let open = file else { return }
        file = nil
        try? open.descriptor.close()
        let url: URL
        do {
            url = try ResourcePlacement.place(open.partialPath, named: open.name, inDirectoryAt: directoryPath)
        } catch {
            PartialResourceStore.remove(open.partialPath, withRecord: false)
            throw error
        }
        if folderURL == nil {
            let below = url.path.dropFirst(directoryPath.count + 1)
            let top = below.split(separator: "/", maxSplits: 1).first.map(String.init) ?? String(below)
            folderURL = URL(filePath: directoryPath + "/" + top, directoryHint: .isDirectory)
        }
    }

    private func failed(_ detail: String) -> Failure {
        Failure(code: .failed, error: .failed(peer: peer, name: name, detail: detail))
    }
}
