import Foundation
import Synchronization

/// Folders received as one channel that ended early with blocks taken (the link dropped, a block was
/// damaged), kept in memory for the same sender to resume: the writer, its stream read up to the last
/// block taken, the file it was writing still open. One per process, shared by its sessions.
///
/// Kept in memory only: a receiver that restarts resumes no folder. A kept folder goes after
/// ``Session/Configuration/partialResourceLifetime``, and the oldest beyond ``maximumFolders``; each
/// holds one file open at most, which is then closed and removed.
final class KeptFolders: Sendable {
    private struct Kept {
        var writer: FolderWriter
        let kept: ContinuousClock.Instant
    }

    /// The store of the process.
    static let shared = KeptFolders()

    /// The most folders kept at once.
    static let maximumFolders = 64

    private let folders = Mutex<[PartialResourceStore.Key: Kept]>([:])

    /// Keeps `writer` for a resume of `key`, for `lifetime`.
    func keep(_ writer: FolderWriter, for key: PartialResourceStore.Key, lifetime: Duration) {
        var dropped: [FolderWriter] = []
        folders.withLock { table in
            dropped += Self.removeExpired(from: &table, lifetime: lifetime)
            if let earlier = table.removeValue(forKey: key) { dropped.append(earlier.writer) }
            table[key] = Kept(writer: writer, kept: .now)
            while table.count > Self.maximumFolders, let oldest = table.min(by: { $0.value.kept < $1.value.kept }) {
                dropped.append(oldest.value.writer)
                table[oldest.key] = nil
            }
        }
        for var writer in dropped { writer.abandon() }
    }

    /// The folder kept for `key`, taken out of the store; `nil` when none is (or it is past `lifetime`).
    func claim(_ key: PartialResourceStore.Key, lifetime: Duration) -> FolderWriter? {
        var dropped: [FolderWriter] = []
        let writer = folders.withLock { table -> FolderWriter? in
            dropped = Self.removeExpired(from: &table, lifetime: lifetime)
            return table.removeValue(forKey: key)?.writer
        }
        for var writer in dropped { writer.abandon() }
        return writer
    }

    private static func removeExpired(
        from table: inout [PartialResourceStore.Key: Kept],
        lifetime: Duration
    ) -> [FolderWriter] {
        let now = ContinuousClock.now
        let expired = table.filter { now - $0.value.kept > lifetime }
        for key in expired.keys { table[key] = nil }
        return expired.values.map(\.writer)
    }
}
