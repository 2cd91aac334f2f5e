import Dispatch
import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The transfers cut short and kept in receive directories for their senders to resume, files and
/// folders alike, shared by the sessions of the process (two sessions may receive into one directory).
///
/// A kept file is its hidden partial file `.partial-<id>` and its record `.partial-<id>.resume`
/// (``PartialResourceRecord``); a kept folder is its hidden staging directory `.partial-<id>.d`, the
/// partial file it was writing, and its record `.partial-<id>.folder` (``FolderRecord``). A directory's
/// records are read the first time a transfer arrives there, so transfers kept by an earlier run of the
/// process resume too. What is past its lifetime goes when the directory is next used; past the byte
/// limit or ``maximumEntries`` the oldest go first, with their files. A kept transfer is handed to one
/// transfer at a time (``claim(_:limits:)``), and holds no descriptor while it waits.
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

    /// Which transfer a transfer receives: the same from the same peer resumes.
    struct Key: Hashable, Sendable {
        var directory: String
        var peer: UUID
        var name: [UInt8]
        var size: UInt64
        /// Whether it is a folder sent as one channel.
        var isFolder = false
    }

    /// A kept file: its partial file and what it holds.
    struct KeptFile: Sendable {
        /// The hidden partial file.
        var partialPath: String
        /// What it holds.
        var record: PartialResourceRecord
        /// The digests of its blocks, when this process checked them and kept them in memory: a resume
        /// on a link of the same ``digestKind`` then trusts them without reading the blocks again. `nil`
        /// for a record read from disk, whose blocks are hashed again before they are offered.
        var digests: [Int: [UInt8]]? = nil
        /// The hash ``digests`` were made with.
        var digestKind = BlockDigestKind.xxh64

        /// The kept digests if they are of `kind`; `nil` when the blocks must be hashed again.
        func digests(of kind: BlockDigestKind) -> [Int: [UInt8]]? {
            digestKind == kind ? digests : nil
        }
    }

    /// What is kept of a transfer cut short.
    enum Kept: Sendable {
        case file(KeptFile)
        /// A folder: its record says where its files are (``FolderWriter/init(restoring:peer:directoryPath:limits:)``).
        case folder(FolderRecord)

        /// The kept file, if this is one.
        var file: KeptFile? {
            if case .file(let file) = self { return file }
            return nil
        }
    }

    /// A kept transfer in its directory's list.
    struct Entry: Sendable {
        let kept: Kept
        /// Where its record is on disk.
        let recordPath: String

        /// Which transfer it is, in `directory`.
        func key(in directory: String) -> Key {
            switch kept {
            case .file(let file):
                Key(directory: directory, peer: file.record.peer, name: file.record.name, size: file.record.size)
            case .folder(let record):
                Key(directory: directory, peer: record.peer, name: record.name, size: record.size, isFolder: true)
            }
        }

        /// When its record was last written.
        var saved: Date {
            switch kept {
            case .file(let file): file.record.saved
            case .folder(let record): record.saved
            }
        }

        /// The bytes of the blocks it holds, as the byte limit counts them.
        var heldBytes: UInt64 {
            switch kept {
            case .file(let file): file.record.heldBytes
            case .folder(let record): record.heldBytes
            }
        }

        /// Removes what it holds on disk, its record too.
        func discard() {
            switch kept {
            case .file(let file):
                PartialResourceStore.remove(file.partialPath)
            case .folder(let record):
                if let path = record.file?.partialPath { Platform.unlink(path) }
                if let path = record.stagingPath { Platform.removeTree(atPath: path) }
                Platform.unlink(recordPath)
            }
        }
    }

    /// The store of the process.
    static let shared = PartialResourceStore()

    /// The most transfers kept in one directory; past it the oldest go first, whatever their size (a peer
    /// that cuts many small transfers short cannot fill the directory with records).
    static let maximumEntries = 256

    /// How long a transfer waits for an earlier one of the same resource to end (its connection
    /// dropped, say, and the sender resumed at once on a new one) before it starts without its blocks.
    static let earlierTransferWait: DispatchTimeInterval = .seconds(5)

    /// The unclaimed entries of each directory read so far, by path.
    private let directories = Mutex<[String: [Entry]]>([:])

    /// The transfers receiving each resource now; a group left when the transfer ends
    /// (``begin(_:on:deadline:then:)``).
    let active = Mutex<[Key: DispatchGroup]>([:])

    /// Takes the kept transfer of `key`, if any; it is no longer offered to anyone else. A file's record
    /// stays beside its partial file, which the transfer goes on saving; a folder's record is the new
    /// owner's to remove (``Entry/recordPath``).
    ///
    /// - Parameters:
    ///   - key: the transfer.
    ///   - limits: what may be kept (what is past its lifetime is removed on the way).
    /// - Returns: the entry, now the caller's to resume, keep again or discard.
    func claim(_ key: Key, limits: Limits) -> Entry? {
        let fromDisk = directories.withLock { $0[key.directory] == nil } ? Self.read(key.directory) : []
        let (found, expired) = directories.withLock { table -> (Entry?, [Entry]) in
            var entries = table[key.directory] ?? fromDisk
            let oldest = Date(timeIntervalSinceNow: -limits.lifetime)
            let expired = entries.filter { $0.saved < oldest }
            entries.removeAll { $0.saved < oldest }
            let found = entries.firstIndex { $0.key(in: key.directory) == key }.map { entries.remove(at: $0) }
            table[key.directory] = entries
            return (found, expired)
        }
        for entry in expired { entry.discard() }
        return found
    }

    /// Writes a running file transfer's record now: if the process stops, what was checked so far can be
    /// resumed by its next run.
    ///
    /// - Parameters:
    ///   - record: what the partial file holds.
    ///   - partialPath: the partial file.
    func save(_ record: PartialResourceRecord, partialPath: String) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        Self.writeRecord(data, to: Self.recordPath(for: partialPath))
    }

    /// Keeps a transfer cut short for its sender to resume: writes its record and offers it to the next
    /// transfer of the same key; then removes what is past the limits, oldest first. What holds no block,
    /// or more than the limit alone, is removed at once.
    ///
    /// - Parameters:
    ///   - kept: what the transfer leaves.
    ///   - directory: the receive directory's path.
    ///   - limits: what may be kept.
    func keep(_ kept: Kept, in directory: String, limits: Limits) {
        let recordPath: String
        let data: Data?
        switch kept {
        case .file(let file):
            recordPath = Self.recordPath(for: file.partialPath)
            data = file.record.blocks.isEmpty ? nil : try? JSONEncoder().encode(file.record)
        case .folder(let record):
            recordPath = directory + "/" + Self.newPartialName() + ".folder"
            data = record.digests.isEmpty ? nil : try? JSONEncoder().encode(record)
        }
        let entry = Entry(kept: kept, recordPath: recordPath)
        guard limits.keepsAnything, let data, entry.heldBytes <= limits.maximumBytes else {
            entry.discard()
            return
        }
        Self.writeRecord(data, to: recordPath)
        let key = entry.key(in: directory)
        let fromDisk = directories.withLock { $0[directory] == nil } ? Self.read(directory) : []
        let evicted = directories.withLock { table -> [Entry] in
            var entries = table[directory] ?? fromDisk
            var evicted: [Entry] = []
            entries.removeAll { other in
                // One kept transfer per key: an earlier one of the same goes.
                guard other.key(in: directory) == key else { return false }
                if other.recordPath != recordPath { evicted.append(other) }
                return true
            }
            entries.append(entry)
            entries.sort { $0.saved > $1.saved }
            var total: UInt64 = 0
            var count = 0
            entries.removeAll { entry in
                total += entry.heldBytes
                count += 1
                guard total > limits.maximumBytes || count > Self.maximumEntries else { return false }
                evicted.append(entry)
                return true
            }
            table[directory] = entries
            return evicted
        }
        for old in evicted { old.discard() }
    }

    /// Forgets what was read of `directory`, as a new process would not know it, leaving its files and
    /// records on disk: they are read again by the next transfer that arrives there (tests of a receiver
    /// that restarts).
    ///
    /// - Parameter directory: the receive directory's path.
    func forget(_ directory: String) {
        directories.withLock { $0[directory] = nil }
    }
}
