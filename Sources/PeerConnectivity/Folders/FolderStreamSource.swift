import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// A folder's files read as one folder stream (``FolderStream``): each file's header, then its bytes,
/// read from the file as the stream's blocks are read. A file is opened when the stream reaches it
/// (``FolderTree/open(_:in:peer:name:)``: through no symbolic link, and only a regular file) and closed
/// once its last byte is read; one read in two of a chunk's length carries on a file the read before
/// left open.
final class FolderStreamSource: ResourceSource {
    /// An entry of the stream.
    private struct Entry: Sendable {
        let file: FolderTree.File
        /// The header's bytes.
        let header: [UInt8]
        /// Where the header starts in the stream.
        let start: UInt64
        /// Where the file's bytes start in the stream.
        var dataStart: UInt64 { start + UInt64(header.count) }
        /// Where the entry ends in the stream.
        var end: UInt64 { dataStart + file.size }
    }

    private let entries: [Entry]
    private let root: Int32
    private let peer: PeerID
    private let name: String
    /// Files a read left open before their end, by entry.
    private let open = Mutex<[Int: SystemPackage.FileDescriptor]>([:])
    /// The stream's length.
    let size: UInt64

    /// The stream of `tree`'s files, read from the folder open as `root` (which ``close()`` closes).
    init(tree: FolderTree, root: Int32, name: String, peer: PeerID) {
        var entries: [Entry] = []
        entries.reserveCapacity(tree.files.count)
        var offset: UInt64 = 0
        for file in tree.files {
            let path = Array(file.name.utf8.dropFirst(name.utf8.count + 1))
            let entry = Entry(file: file, header: FolderStream.header(path: path, length: file.size), start: offset)
            entries.append(entry)
            offset = entry.end
        }
        self.entries = entries
        self.size = offset
        self.root = root
        self.peer = peer
        self.name = name
    }

    func read(at offset: UInt64, length: Int, into buffer: inout ByteBuffer) throws {
        var position = offset
        let end = offset + UInt64(length)
        var index = entryIndex(containing: position)
        while position < end {
            let entry = entries[index]
            if position < entry.dataStart {
                let from = Int(position - entry.start)
                let count = min(entry.header.count - from, Int(end - position))
                buffer.writeBytes(entry.header[from..<(from + count)])
                position += UInt64(count)
                continue
            }
            if position < entry.end {
                let count = Int(min(entry.end, end) - position)
                let descriptor = try descriptor(of: index)
                let isLast = position + UInt64(count) == entry.end
                do {
                    try ResourceFileIO.read(descriptor, at: position - entry.dataStart, length: count, into: &buffer)
                } catch {
                    try? descriptor.close()
                    throw TransferError.failed(peer: peer, name: name, detail: "\(entry.file.name): \(error)")
                }
                if isLast {
                    try? descriptor.close()
                } else {
                    open.withLock { $0[index] = descriptor }
                }
                position += UInt64(count)
            }
            index += 1
        }
    }

    func close() {
        for descriptor in open.withLock({ Array($0.values) }) { try? descriptor.close() }
        Platform.close(root)
    }

    /// The file of entry `index`, left open by an earlier read or opened now; checked to have the length
    /// it had when it was listed.
    private func descriptor(of index: Int) throws -> SystemPackage.FileDescriptor {
        if let kept = open.withLock({ $0.removeValue(forKey: index) }) { return kept }
        let file = entries[index].file
        let (descriptor, size) = try FolderTree.open(file, in: root, peer: peer, name: name)
        guard size == file.size else {
            try? descriptor.close()
            let detail = "\(file.name) changed length since the folder was listed (\(file.size) bytes, now \(size))"
            throw TransferError.failed(peer: peer, name: name, detail: detail)
        }
        return descriptor
    }

    /// The entry whose header or bytes hold stream byte `offset`.
    private func entryIndex(containing offset: UInt64) -> Int {
        var low = 0
        var high = entries.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if entries[middle].start <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
