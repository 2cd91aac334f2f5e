import NIOCore
import PeerConnectivityCore
import Testing

/// The folder stream a folder channel carries: entries read back from any cut of the bytes, and the
/// streams a hostile sender could make refused with a reason.
@Suite("Folder stream")
struct FolderStreamParserTests {
    /// A stream of `entries` (path and bytes).
    private static func stream(_ entries: [(String, [UInt8])]) -> [UInt8] {
        entries.flatMap { FolderStream.header(path: Array($0.0.utf8), length: UInt64($0.1.count)) + $0.1 }
    }

    /// What a parser says for `bytes` fed in pieces of `piece` bytes: entries with their bytes gathered.
    private static func parse(
        _ bytes: [UInt8],
        size: UInt64? = nil,
        piece: Int,
        maximumEntries: Int = 100
    ) throws -> [(String, [UInt8])] {
        var parser = FolderStreamParser(size: size ?? UInt64(bytes.count), maximumEntries: maximumEntries)
        var entries: [(String, [UInt8])] = []
        var open = false
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            try parser.parse(ByteBuffer(bytes: bytes[start..<end])) { event in
                switch event {
                case .entryStarted(let path, _):
                    #expect(!open, "an entry starts only after the last one ended")
                    entries.append((String(decoding: path, as: UTF8.self), []))
                    open = true
                case .bytes(let buffer):
                    #expect(open)
                    entries[entries.count - 1].1 += Array(buffer.readableBytesView)
                case .entryEnded:
                    open = false
                }
            }
            start = end
        }
        try parser.finish()
        return entries
    }

    @Test("entries come back whole from every cut of the stream, empty files included")
    func entriesFromAnyCut() throws {
        let entries: [(String, [UInt8])] = [
            ("a.txt", Array("alpha".utf8)), ("empty", []), ("d/e/f.bin", (0..<300).map { UInt8($0 % 251) }),
            ("日本.txt", [1]),
        ]
        let bytes = Self.stream(entries)
        for piece in [1, 2, 3, 7, 10, 11, 64, bytes.count] {
            let parsed = try Self.parse(bytes, piece: piece)
            #expect(parsed.map(\.0) == entries.map(\.0), "pieces of \(piece)")
            #expect(parsed.map(\.1) == entries.map(\.1), "pieces of \(piece)")
        }
    }

    @Test("a path of no bytes or over 1,024, too many entries, or an entry past the folder's size is refused")
    func hostileStreams() throws {
        let empty: [UInt8] = [0, 0] + [UInt8](repeating: 0, count: 8)
        #expect(throws: FolderStreamError("entry 0 has a path of 0 bytes, not 1-1024")) {
            try Self.parse(empty, piece: 100)
        }
        let long: [UInt8] = [0x04, 0x01] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x61, count: 1025)
        #expect(throws: FolderStreamError("entry 0 has a path of 1025 bytes, not 1-1024")) {
            try Self.parse(long, piece: 100)
        }
        let three = Self.stream([("a", [1]), ("b", [2]), ("c", [3])])
        #expect(throws: FolderStreamError("more than 2 entries in the folder", isOverLimit: true)) {
            try Self.parse(three, piece: 5, maximumEntries: 2)
        }
        // The header says 1,000 bytes; the folder has 20 after it.
        let overrun = FolderStream.header(path: Array("x".utf8), length: 1000) + [UInt8](repeating: 7, count: 20)
        #expect(throws: FolderStreamError("entry 0 of 1000 bytes runs past the folder's 31")) {
            try Self.parse(overrun, piece: 4)
        }
        // More bytes than the folder announced.
        #expect(throws: FolderStreamError("13 bytes at 0 run past the folder's 11")) {
            try Self.parse(Self.stream([("a", [1])]) + [0], size: 11, piece: 100)
        }
    }

    @Test("a stream that ends inside a header or an entry, or short of its size, is refused at its end")
    func truncatedStreams() throws {
        let whole = Self.stream([("a.txt", Array("alpha".utf8))])
        for cut in [3, 12, whole.count - 1] {
            var parser = FolderStreamParser(size: UInt64(cut), maximumEntries: 10)
            do {
                try parser.parse(ByteBuffer(bytes: whole[0..<cut])) { _ in }
                try parser.finish()
                Issue.record("a stream cut at \(cut) of \(whole.count) was taken")
            } catch let error as FolderStreamError {
                #expect(error.description.contains("entry") || error.description.contains("past"), "\(error)")
            }
        }
        var short = FolderStreamParser(size: UInt64(whole.count), maximumEntries: 10)
        try short.parse(ByteBuffer(bytes: whole[0..<4])) { _ in }
        #expect(throws: FolderStreamError("the folder ended at 4 of \(whole.count) bytes")) { try short.finish() }
    }
}
