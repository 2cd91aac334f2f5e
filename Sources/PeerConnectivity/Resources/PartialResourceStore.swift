import Dispatch
import Foundation
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// The interrupted resources kept in resource directories for their senders to resume, shared by
/// the sessions of the process (two sessions may receive into one directory).
///
/// A kept resource is two files in the directory: the hidden partial file `.partial-<id>` and its
/// record `.partial-<id>.resume` (``PartialResourceRecord``). A directory's records are read the first
/// time a resource arrives there, so resources kept by an earlier run of the process resume too.
/// Records past their lifetime, over the byte limit (oldest first) or whose partial file is gone are
/// removed with their files; so are the oldest past ``maximumEntries``. A record is handed to one transfer at a time (``claim(in:peer:name:size:blockLength:limits:)``).
final class PartialResourceStore: Sendable {
    /// How long and how much is kept: from ``Session/Configuration/partialResourceLifetime`` and
    /// ``Session/Configuration/maximumPartialResourceBytes``.
    struct Limits: Sendable {
        /// Seconds a record stays after it was last written.
        var lifetime: TimeInterval
        /// The most bytes of blocks kept in one directory.
        var maximumBytes: UInt64

        /// Whether anything is kept at all.
        var keepsAnything: Bool { lifetime > 0 && maximumBytes > 0 }
    }

    /// A kept resource: its partial file and what it holds.
    struct Entry: Sendable {
        /// The hidden partial file.
        var partialPath: String
        /// What it holds.
        var record: PartialResourceRecord
        /// The digests of its blocks, when this process checked them and kept them in memory: a resume
        /// then trusts them without reading the blocks again. `nil` for a record read from disk, whose
        /// blocks are hashed again before they are offered.
        var digests: [Int: [UInt8]]? = nil
    }

    /// The store of the process.
    static let shared = PartialResourceStore()

    /// The most interrupted resources kept in one directory; past it the oldest go first, whatever
    /// their size (a peer that cuts many small resources short cannot fill the directory with records).
    static let maximumEntries = 256

    /// Which resource a transfer receives: the same from the same peer resumes.
    struct Key: Hashable, Sendable {
        var directory: String
        var peer: UUID
        var name: [UInt8]
        var size: UInt64
        /// Whether it is a folder sent as one channel (kept by ``KeptFolders``, never on disk).
        var isFolder = false
    }

    /// How long a transfer waits for an earlier one of the same resource to end (its connection
    /// dropped, say, and the sender resumed at once on a new one) before it starts without its blocks.
    static let earlierTransferWait: DispatchTimeInterval = .seconds(5)

    /// The unclaimed entries of each directory read so far, by path.
    private let directories = Mutex<[String: [Entry]]>([:])

    /// The transfers receiving each resource now; a group left when the transfer ends.
    private let active = Mutex<[Key: DispatchGroup]>([:])

    /// This process's part of a new partial file's name: random, drawn once.
    private static let processTag = String(UInt64.random(in: .min ... .max), radix: 16)
    /// Partial files named so far by this process.
    private static let partialsNamed = Atomic<UInt64>(0)

    /// Creates a new partial file in the directory at `directoryPath` (made if it is missing): readable by
    /// the owner only, never an existing name, no symbolic link followed.
    ///
    /// - Returns: its descriptor and path.
    /// - Throws: ``POSIXFailure`` when it cannot be created.
    static func createPartial(in directoryPath: String) throws -> (SystemPackage.FileDescriptor, String) {
        let path = directoryPath + "/" + newPartialName()
        let create = {
            try SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(path),
                .readWrite,
                options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
        }
        do {
            do {
                return (try create(), path)
            } catch SystemPackage.Errno.noSuchFileOrDirectory {
                // The directory is made when the first resource arrives, not asked after for every one.
                try FileManager.default.createDirectory(atPath: directoryPath, withIntermediateDirectories: true)
                return (try create(), path)
            }
        } catch let error as SystemPackage.Errno {
            throw POSIXFailure("open \(path)", error)
        }
    }

    /// A name for a new partial file, `.partial-<process>-<n>`: unique among this process's, and, by its
    /// random 64-bit part, unlikely to be another process's (creating it is exclusive all the same). It
    /// costs no system call, where a `UUID` reads the system's random source for each file.
    static func newPartialName() -> String {
        let number = partialsNamed.wrappingAdd(1, ordering: .relaxed).newValue
        return ".partial-\(processTag)-\(String(number, radix: 16))"
    }

    /// Marks a transfer of `key` as receiving, then calls `body` on `queue` with the mark: at once (on
    /// the caller's thread) when no transfer of the same resource is under way, else once that one has
    /// ended and kept its blocks, or with `nil` after ``earlierTransferWait`` (two of the same resource at
    /// once: the later one keeps nothing of it). Never blocks: `queue` may be shared with the earlier
    /// transfer.
    ///
    /// - Parameters:
    ///   - key: the resource.
    ///   - queue: where `body` runs when it has to wait.
    ///   - deadline: when to give up waiting.
    ///   - body: called once, with the mark to pass to ``end(_:mark:)``, or `nil`.
    func begin(
        _ key: Key,
        on queue: DispatchQueue,
        deadline: DispatchTime = .now() + PartialResourceStore.earlierTransferWait,
        then body: @escaping @Sendable (DispatchGroup?) -> Void
    ) {
        let (mine, earlier) = active.withLock { table -> (DispatchGroup?, DispatchGroup?) in
            if let group = table[key] { return (nil, group) }
            let group = DispatchGroup()
            group.enter()
            table[key] = group
            return (group, nil)
        }
        if let mine {
            body(mine)
            return
        }
        let waiting = Mutex(true)
        let goOn: @Sendable (_ timedOut: Bool) -> Void = { timedOut in
            // The earlier transfer's end and the deadline both come; the first goes on.
            let first = waiting.withLock { waiting -> Bool in
                defer { waiting = false }
                return waiting
            }
            guard first else { return }
            if timedOut { body(nil) } else { self.begin(key, on: queue, deadline: deadline, then: body) }
        }
        earlier!.notify(queue: queue) { goOn(false) }
        queue.asyncAfter(deadline: deadline) { goOn(true) }
    }

    /// The transfer of `key` begun with ``begin(_:on:deadline:then:)`` has ended (its blocks kept or removed).
    ///
    /// - Parameters:
    ///   - key: the resource.
    ///   - mark: what ``begin(_:on:deadline:then:)`` gave.
    func end(_ key: Key, mark: DispatchGroup) {
        active.withLock { table in
            if table[key] === mark { table[key] = nil }
        }
        mark.leave()
    }

    /// The record file of a partial file.
    static func recordPath(for partialPath: String) -> String {
        partialPath + ".resume"
    }

    /// Takes the kept resource that matches, if any; it is no longer offered to anyone else.
    ///
    /// - Parameters:
    ///   - directory: the resource directory.
    ///   - peer: the sender's id.
    ///   - name: the resource's name as sent.
    ///   - size: its length.
    ///   - blockLength: its block length.
    ///   - limits: what may be kept (expired records are removed on the way).
    /// - Returns: the entry, now the caller's to resume, keep again or discard.
    func claim(
        in directory: URL,
        peer: UUID,
        name: [UInt8],
        size: UInt64,
        blockLength: Int,
        limits: Limits
    ) -> Entry? {
        let (entry, expired) = directories.withLock { table -> (Entry?, [Entry]) in
            var entries = table[directory.path] ?? Self.read(directory)
            let now = Date()
            let expired = entries.filter { now.timeIntervalSince($0.record.saved) > limits.lifetime }
            entries.removeAll { now.timeIntervalSince($0.record.saved) > limits.lifetime }
            var found: Entry?
            if let index = entries.firstIndex(where: {
                $0.record.matches(peer: peer, name: name, size: size, blockLength: blockLength)
            }) {
                found = entries.remove(at: index)
            }
            table[directory.path] = entries
            return (found, expired)
        }
        for old in expired { Self.remove(old.partialPath) }
        return entry
    }

    /// Writes a transfer's record now (it goes on receiving): if the process stops, what was checked
    /// so far can be resumed by its next run.
    ///
    /// - Parameters:
    ///   - record: what the partial file holds.
    ///   - partialPath: the partial file.
    func save(_ record: PartialResourceRecord, partialPath: String) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        Self.writeRecord(data, to: Self.recordPath(for: partialPath))
    }

    /// Writes a record file: readable by the owner only, as a partial file (it names the sender and what it
    /// sent); written beside and renamed over the old record, so that a stop halfway leaves the old one whole.
    static func writeRecord(_ data: Data, to recordPath: String) {
        let temporary = recordPath + ".new-\(UUID().uuidString)"
        do {
            let descriptor = try SystemPackage.FileDescriptor.open(
                SystemPackage.FilePath(temporary),
                .writeOnly,
                options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
            defer { try? descriptor.close() }
            _ = try descriptor.writeAll(data)
        } catch {
            Platform.unlink(temporary)
            return
        }
        if !Platform.rename(temporary, to: recordPath) { Platform.unlink(temporary) }
    }

    /// Keeps an interrupted transfer for its sender to resume: writes its record and offers it to the
    /// next matching resource; then removes what is past the limits, oldest first.
    ///
    /// - Parameters:
    ///   - record: what the partial file holds.
    ///   - partialPath: the partial file.
    ///   - directory: the resource directory.
    ///   - limits: what may be kept.
    ///   - digests: the held blocks' digests, as this process checked them.
    func keep(
        _ record: PartialResourceRecord,
        partialPath: String,
        in directory: URL,
        limits: Limits,
        digests: [Int: [UInt8]]? = nil
    ) {
        guard limits.keepsAnything, !record.blocks.isEmpty, record.heldBytes <= limits.maximumBytes else {
            Self.remove(partialPath)
            return
        }
        save(record, partialPath: partialPath)
        let evicted = directories.withLock { table -> [Entry] in
            var entries = table[directory.path] ?? Self.read(directory)
            entries.removeAll { $0.partialPath == partialPath }
            entries.append(Entry(partialPath: partialPath, record: record, digests: digests))
            entries.sort { $0.record.saved > $1.record.saved }
            var total: UInt64 = 0
            var count = 0
            var evicted: [Entry] = []
            entries.removeAll { entry in
                total += entry.record.heldBytes
                count += 1
                guard total > limits.maximumBytes || count > Self.maximumEntries else { return false }
                evicted.append(entry)
                return true
            }
            table[directory.path] = entries
            return evicted
        }
        for old in evicted { Self.remove(old.partialPath) }
    }

    /// Forgets what was read of `directory`, as a new process would not know it: its records are read
    /// again from disk by the next resource that arrives there (tests of a receiver that restarts).
    ///
    /// - Parameter directory: the resource directory.
    func forget(_ directory: URL) {
        directories.withLock { $0[directory.path] = nil }
    }

    /// Removes a partial file and its record.
    ///
    /// - Parameters:
    ///   - partialPath: the partial file.
    ///   - withRecord: whether it may have a record: `false` only when none was ever written.
    static func remove(_ partialPath: String, withRecord: Bool = true) {
        Platform.unlink(partialPath)
        if withRecord { Platform.unlink(recordPath(for: partialPath)) }
    }

    /// Removes the record of a partial file that was moved to its final name.
    ///
    /// - Parameter partialPath: the partial file's name before the move.
    static func removeRecord(of partialPath: String) {
        Platform.unlink(recordPath(for: partialPath))
    }

    /// The records in `directory` whose partial file exists; a record that cannot be read is removed.
    private static func read(_ directory: URL) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var entries: [Entry] = []
        for name in names where name.hasPrefix(".partial-") && name.hasSuffix(".resume") {
            let recordPath = directory.appendingPathComponent(name).path
            let partialPath = String(recordPath.dropLast(".resume".count))
            guard let data = FileManager.default.contents(atPath: recordPath),
                let record = try? JSONDecoder().decode(PartialResourceRecord.self, from: data),
                record.isValid,
                FileManager.default.fileExists(atPath: partialPath)
            else {
                remove(partialPath)
                continue
            }
            entries.append(Entry(partialPath: partialPath, record: record))
        }
        return entries
    }
}
