import Foundation
import PeerConnectivityTesting
import Synchronization
import Testing

@testable import PeerConnectivity

/// The store of interrupted resources, on a real directory: what it keeps, what it refuses to read,
/// and its limits.
@Suite("Partial resource store")
struct PartialResourceStoreTests {
    private static let limits = PartialResourceStore.Limits(lifetime: 3600, maximumBytes: 1 << 40)

    private static func record(peer: UUID, name: String, blocks: [Int], size: UInt64 = 8 << 20) -> PartialResourceRecord
    {
        PartialResourceRecord(
            peer: peer,
            name: Array(name.utf8),
            size: size,
            blockLength: 1 << 20,
            blocks: blocks,
            saved: Date()
        )
    }

    private static func key(in directory: URL, peer: UUID, name: [UInt8], size: UInt64) -> PartialResourceStore.Key {
        PartialResourceStore.Key(directory: directory.path, peer: peer, name: name, size: size)
    }

    private static func partial(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent(".partial-\(UUID().uuidString)").path
        try Data(count: 16).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a kept resource is claimed once, by the same peer, name and length only; its record is owner-only")
    func claimOnce() throws {
        let scratch = try ScratchDirectory("store-claim")
        defer { scratch.remove() }
        let store = PartialResourceStore()
        let peer = UUID()
        let path = try Self.partial(in: scratch.url)
        store.keep(
            .file(.init(partialPath: path, record: Self.record(peer: peer, name: "a.bin", blocks: [0, 2]))),
            in: scratch.url.path,
            limits: Self.limits
        )
        let attributes = try FileManager.default.attributesOfItem(atPath: PartialResourceStore.recordPath(for: path))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(
            store.claim(
                Self.key(in: scratch.url, peer: UUID(), name: Array("a.bin".utf8), size: 8 << 20),
                limits: Self.limits
            ) == nil
        )
        #expect(
            store.claim(
                Self.key(in: scratch.url, peer: peer, name: Array("b.bin".utf8), size: 8 << 20),
                limits: Self.limits
            ) == nil
        )
        #expect(
            store.claim(
                Self.key(in: scratch.url, peer: peer, name: Array("a.bin".utf8), size: 9 << 20),
                limits: Self.limits
            ) == nil
        )
        let entry = store.claim(
            Self.key(in: scratch.url, peer: peer, name: Array("a.bin".utf8), size: 8 << 20),
            limits: Self.limits
        )
        #expect(entry?.kept.file?.record.blocks == [0, 2])
        #expect(
            store.claim(
                Self.key(in: scratch.url, peer: peer, name: Array("a.bin".utf8), size: 8 << 20),
                limits: Self.limits
            ) == nil
        )
    }

    @Test(
        "records that do not parse, or name blocks outside their resource, are removed with their files, without a crash"
    )
    func hostileRecords() throws {
        let scratch = try ScratchDirectory("store-hostile")
        defer { scratch.remove() }
        let peer = UUID()
        var bad: [PartialResourceRecord] = [
            Self.record(peer: peer, name: "past-end", blocks: [8]),
            Self.record(peer: peer, name: "negative", blocks: [-1]),
        ]
        var zeroLength = Self.record(peer: peer, name: "zero-length", blocks: [0])
        zeroLength.blockLength = 0
        bad.append(zeroLength)
        var paths: [String] = []
        for record in bad {
            let path = try Self.partial(in: scratch.url)
            try JSONEncoder().encode(record).write(to: URL(fileURLWithPath: PartialResourceStore.recordPath(for: path)))
            paths.append(path)
        }
        let garbage = try Self.partial(in: scratch.url)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: PartialResourceStore.recordPath(for: garbage)))
        paths.append(garbage)

        let store = PartialResourceStore()
        for record in bad {
            #expect(
                store.claim(
                    Self.key(in: scratch.url, peer: peer, name: record.name, size: record.size),
                    limits: Self.limits
                ) == nil
            )
        }
        #expect(try scratch.contents().isEmpty, "every bad record and its partial file were removed")
        // Keeping one more works after them: the sums over the records do not trap.
        let good = try Self.partial(in: scratch.url)
        store.keep(
            .file(.init(partialPath: good, record: Self.record(peer: peer, name: "good", blocks: [1]))),
            in: scratch.url.path,
            limits: Self.limits
        )
        #expect(try scratch.contents().count == 2)
    }

    @Test("past the byte limit or the entry limit, the oldest kept resources go first")
    func limits() throws {
        let scratch = try ScratchDirectory("store-limits")
        defer { scratch.remove() }
        let store = PartialResourceStore()
        let peer = UUID()
        let small = PartialResourceStore.Limits(lifetime: 3600, maximumBytes: 3 << 20)
        var paths: [String] = []
        for index in 0..<3 {
            let path = try Self.partial(in: scratch.url)
            var record = Self.record(peer: peer, name: "r\(index)", blocks: [0, 1])
            record.saved = Date(timeIntervalSinceNow: Double(index))
            store.keep(.file(.init(partialPath: path, record: record)), in: scratch.url.path, limits: small)
            paths.append(path)
        }
        // 2 MiB each, 3 MiB allowed: only the newest stays.
        #expect(!FileManager.default.fileExists(atPath: paths[0]))
        #expect(!FileManager.default.fileExists(atPath: paths[1]))
        #expect(FileManager.default.fileExists(atPath: paths[2]))

        let many = try ScratchDirectory("store-many")
        defer { many.remove() }
        for index in 0..<(PartialResourceStore.maximumEntries + 10) {
            let path = try Self.partial(in: many.url)
            var record = Self.record(peer: peer, name: "m\(index)", blocks: [0], size: 1)
            record.saved = Date(timeIntervalSinceNow: Double(index) / 1000)
            store.keep(.file(.init(partialPath: path, record: record)), in: many.url.path, limits: Self.limits)
        }
        #expect(try many.contents().count == 2 * PartialResourceStore.maximumEntries)
    }

    @Test("a lifetime of zero keeps nothing")
    func keepsNothing() throws {
        let scratch = try ScratchDirectory("store-zero")
        defer { scratch.remove() }
        let path = try Self.partial(in: scratch.url)
        PartialResourceStore().keep(
            .file(.init(partialPath: path, record: Self.record(peer: UUID(), name: "x", blocks: [0]))),
            in: scratch.url.path,
            limits: PartialResourceStore.Limits(lifetime: 0, maximumBytes: 1 << 30)
        )
        #expect(try scratch.contents().isEmpty)
    }

    @Test("a second transfer of one resource waits for the first to end without holding the queue they share")
    func beginWaitsWithoutBlocking() async throws {
        let store = PartialResourceStore()
        let key = PartialResourceStore.Key(directory: "/nowhere", peer: UUID(), name: Array("a.bin".utf8), size: 1)
        let queue = DispatchQueue(label: "store-begin-test")
        let log = Mutex<[String]>([])
        let first = Mutex<DispatchGroup?>(nil)
        let (ended, endedContinuation) = AsyncStream.makeStream(of: DispatchGroup?.self)
        queue.sync {
            store.begin(key, on: queue) { mark in
                first.withLock { $0 = mark }
                log.withLock { $0.append("first") }
            }
            store.begin(key, on: queue) { mark in
                log.withLock { $0.append("second") }
                endedContinuation.yield(mark)
            }
        }
        // The queue is free while the second waits: other work on it runs.
        queue.sync { log.withLock { $0.append("other") } }
        #expect(log.withLock { $0 } == ["first", "other"])
        let mark = try #require(first.withLock { $0 })
        store.end(key, mark: mark)
        var marks = ended.makeAsyncIterator()
        let second = await marks.next()
        #expect(log.withLock { $0 } == ["first", "other", "second"])
        #expect(second != nil && second! !== mark, "the second got a mark of its own")
        if let second = second ?? nil { store.end(key, mark: second) }
    }

    @Test("a second transfer whose first never ends goes on without a mark at the deadline")
    func beginGivesUpAtTheDeadline() async throws {
        let store = PartialResourceStore()
        let key = PartialResourceStore.Key(directory: "/nowhere", peer: UUID(), name: Array("b.bin".utf8), size: 1)
        let queue = DispatchQueue(label: "store-deadline-test")
        let (marks, continuation) = AsyncStream.makeStream(of: DispatchGroup?.self)
        store.begin(key, on: queue) { continuation.yield($0) }
        store.begin(key, on: queue, deadline: .now() + .milliseconds(100)) { continuation.yield($0) }
        var iterator = marks.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first != nil && first! != nil)
        #expect(second != nil && second! == nil, "no mark: the first is still under way")
    }
}
