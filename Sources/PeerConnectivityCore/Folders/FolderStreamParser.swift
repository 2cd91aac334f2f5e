import NIOCore

/// Reads a folder stream (``FolderStream``) as its blocks are checked, in order: says where each entry
/// starts (its path and length), hands on the entry's bytes, and says where it ends. Pure: the
/// receiver writes the files.
///
/// It refuses an entry's path of no bytes or over ``FolderStream/maximumPathLength``, an entry whose
/// header and bytes run past the folder's announced size, more than ``maximumEntries`` entries, and
/// (``finish()``) a stream that ends inside a header or an entry.
package struct FolderStreamParser: Codable, Sendable {
    /// What the stream says, in order.
    package enum Event: Equatable {
        /// An entry starts; `length` of its bytes follow (``bytes(_:)``), then ``entryEnded``.
        case entryStarted(path: [UInt8], length: UInt64)
        /// The next bytes of the current entry.
        case bytes(ByteBuffer)
        /// The current entry's bytes are all in.
        case entryEnded
    }

    /// The folder's announced size: the stream's length.
    package let size: UInt64
    /// The most entries the folder may have.
    package let maximumEntries: Int
    /// Entries started so far.
    package private(set) var entries = 0
    /// Bytes read so far.
    package private(set) var consumed: UInt64 = 0
    /// The header being read, while it is incomplete.
    private var header: [UInt8] = []
    /// Bytes of the current entry still due; `nil` between entries.
    private var remaining: UInt64?

    /// A parser for a folder stream of `size` bytes with at most `maximumEntries` entries.
    package init(size: UInt64, maximumEntries: Int) {
        self.size = size
        self.maximumEntries = maximumEntries
    }

    /// Reads the next bytes of the stream.
    ///
    /// - Parameters:
    ///   - bytes: the bytes after those read so far.
    ///   - handle: called with each event, in order.
    /// - Throws: ``FolderStreamError`` when the stream breaks a rule; what `handle` throws.
    package mutating func parse(_ bytes: ByteBuffer, _ handle: (Event) throws -> Void) throws {
        var bytes = bytes
        guard UInt64(bytes.readableBytes) <= size - consumed else {
            throw FolderStreamError("\(bytes.readableBytes) bytes at \(consumed) run past the folder's \(size)")
        }
        consumed += UInt64(bytes.readableBytes)
        while bytes.readableBytes > 0 {
            if let due = remaining {
                let count = Int(min(due, UInt64(bytes.readableBytes)))
                try handle(.bytes(bytes.readSlice(length: count)!))
                remaining = due - UInt64(count)
                if remaining == 0 {
                    remaining = nil
                    try handle(.entryEnded)
                }
                continue
            }
            try readHeader(from: &bytes, handle)
        }
    }

    /// Whether a parser read back from a record can be one this type made: its counts within its size.
    package var isConsistent: Bool {
        consumed <= size && entries <= maximumEntries
            && header.count < FolderStream.headerLength(pathLength: FolderStream.maximumPathLength)
            && (remaining ?? 0) <= size - consumed && (remaining == nil || header.isEmpty)
    }

    /// The stream's bytes are all in: it must not end inside a header or an entry.
    ///
    /// - Throws: ``FolderStreamError`` when it does, or when bytes are missing.
    package func finish() throws {
        guard consumed == size else { throw FolderStreamError("the folder ended at \(consumed) of \(size) bytes") }
        guard header.isEmpty, remaining == nil else {
            throw FolderStreamError("the folder ended inside entry \(entries)")
        }
    }

    /// Reads what the buffer holds of the next header; starts the entry once it is whole.
    private mutating func readHeader(from bytes: inout ByteBuffer, _ handle: (Event) throws -> Void) throws {
        if header.count < FolderStream.fixedHeaderLength {
            let count = min(FolderStream.fixedHeaderLength - header.count, bytes.readableBytes)
            header += bytes.readBytes(length: count)!
            guard header.count == FolderStream.fixedHeaderLength else { return }
            let pathLength = Int(header[0]) << 8 | Int(header[1])
            guard (1...FolderStream.maximumPathLength).contains(pathLength) else {
                throw FolderStreamError(
                    "entry \(entries) has a path of \(pathLength) bytes, not 1-\(FolderStream.maximumPathLength)"
                )
            }
            guard entries < maximumEntries else {
                throw FolderStreamError("more than \(maximumEntries) entries in the folder", isOverLimit: true)
            }
            // The path and the entry's bytes must fit in what is left of the folder after the fixed header.
            let length = entryLength
            let left = size - (consumed - UInt64(bytes.readableBytes))
            guard UInt64(pathLength) <= left, length <= left - UInt64(pathLength) else {
                throw FolderStreamError("entry \(entries) of \(length) bytes runs past the folder's \(size)")
            }
        }
        let pathLength = Int(header[0]) << 8 | Int(header[1])
        let wanted = FolderStream.fixedHeaderLength + pathLength - header.count
        let count = min(wanted, bytes.readableBytes)
        header += bytes.readBytes(length: count)!
        guard count == wanted else { return }
        let length = entryLength
        let path = Array(header[FolderStream.fixedHeaderLength...])
        header.removeAll(keepingCapacity: true)
        entries += 1
        try handle(.entryStarted(path: path, length: length))
        if length == 0 {
            try handle(.entryEnded)
        } else {
            remaining = length
        }
    }

    /// The file's length in the header read so far (its first ten bytes).
    private var entryLength: UInt64 {
        header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
