import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Folders received as one channel that ended early with blocks taken (the link dropped, a block was
/// damaged), kept for the same sender to resume: the writer, its stream read up to the last block taken,
/// the file it was writing still open. One per process, shared by its sessions.
///
/// Each kept folder also has a record on disk (``FolderRecord``, `.partial-<id>.folder` in its receive
/// directory, beside the folder's staging directory `.partial-<id>.d`), read back the first time a
/// folder arrives in that directory in a later run, so that a receiver that restarts resumes too. A kept
/// folder goes after ``Session/Configuration/partialResourceLifetime``, and the oldest beyond
/// ``maximumFolders``; each holds one file open at most, which is then closed and removed with the
/// record and the staging directory.
final class KeptFolders: Sendable {
    private struct Kept {
        /// What is held of the folder.
        enum Held {
            /// Kept by this process: the writer, its file open.
            case writer(FolderWriter)
            /// Read from disk and not taken up yet.
            case record(FolderRecord)
        }

        var held: Held
        let recordPath: String
        let saved: Date

        /// Closes and removes what it holds, and its record.
        func discard() {
            switch held {
            case .writer(var writer): writer.abandon()
            case .record(let record):
                if let path = record.file?.partialPath { Platform.unlink(path) }
                if let path = record.stagingPath { Platform.removeTree(atPath: path) }
            }
            Platform.unlink(recordPath)
        }
    }

    /// The store of the process.
    static let shared = KeptFolders()

    /// The most folders kept at once.
    static let maximumFolders = 64

    private struct State {
        var folders: [PartialResourceStore.Key: Kept] = [:]
        /// The receive directories whose records were read.
        var directoriesRead: Set<String> = []
    }

    private let state = Mutex(State())

    /// Keeps `writer` for a resume of `key`, for `lifetime`, in memory and on disk.
    func keep(_ writer: FolderWriter, for key: PartialResourceStore.Key, lifetime: Duration) {
        let record = writer.record(peer: key.peer)
        let recordPath = key.directory + "/" + PartialResourceStore.newPartialName() + ".folder"
        if let data = try? JSONEncoder().encode(record) { PartialResourceStore.writeRecord(data, to: recordPath) }
        let kept = Kept(held: .writer(writer), recordPath: recordPath, saved: record.saved)
        let dropped = state.withLock { state -> [Kept] in
            var dropped = Self.removeExpired(from: &state.folders, lifetime: lifetime)
            if let earlier = state.folders.removeValue(forKey: key) { dropped.append(earlier) }
            state.folders[key] = kept
            while state.folders.count > Self.maximumFolders,
                let oldest = state.folders.min(by: { $0.value.saved < $1.value.saved })
            {
                dropped.append(oldest.value)
                state.folders[oldest.key] = nil
            }
            return dropped
        }
        for kept in dropped { kept.discard() }
    }

    /// The folder kept for `key`, taken out of the store (its record removed: it is written again if the
    /// folder is kept again); `nil` when none is, or it is past `lifetime`, or its record does not hold.
    ///
    /// - Parameter peer: the sender, for the writer's errors.
    func claim(_ key: PartialResourceStore.Key, peer: PeerID, lifetime: Duration) -> FolderWriter? {
        let read = state.withLock { !$0.directoriesRead.contains(key.directory) }
        let fromDisk = read ? Self.read(key.directory) : []
        let (claimed, dropped) = state.withLock { state -> (Kept?, [Kept]) in
            if state.directoriesRead.insert(key.directory).inserted {
                for kept in fromDisk {
                    guard case .record(let record) = kept.held else { continue }
                    let other = PartialResourceStore.Key(
                        directory: key.directory,
                        peer: record.peer,
                        name: record.name,
                        size: record.size,
                        isFolder: true
                    )
                    if state.folders[other] == nil { state.folders[other] = kept }
                }
            }
            let dropped = Self.removeExpired(from: &state.folders, lifetime: lifetime)
            return (state.folders.removeValue(forKey: key), dropped)
        }
        for kept in dropped { kept.discard() }
        guard let kept = claimed else { return nil }
        Platform.unlink(kept.recordPath)
        switch kept.held {
        case .writer(let writer):
            return writer
        case .record(let record):
            guard
                let writer = FolderWriter(
                    restoring: record,
                    peer: peer,
                    directoryPath: key.directory,
                    lifetime: lifetime
                )
            else {
                kept.discard()
                return nil
            }
            return writer
        }
    }

    /// Forgets what is kept in memory for `directory` (as a new process would not know it), leaving its
    /// files and records on disk; they are read again when a folder next arrives there.
    func forget(_ directory: String) {
        let forgotten = state.withLock { state -> [Kept] in
            state.directoriesRead.remove(directory)
            let mine = state.folders.filter { $0.key.directory == directory }
            for key in mine.keys { state.folders[key] = nil }
            return Array(mine.values)
        }
        for kept in forgotten {
            if case .writer(var writer) = kept.held { writer.closeFile() }
        }
    }

    private static func removeExpired(
        from table: inout [PartialResourceStore.Key: Kept],
        lifetime: Duration
    ) -> [Kept] {
        let oldest = Date().addingTimeInterval(-lifetime.inSeconds)
        let expired = table.filter { $0.value.saved < oldest }
        for key in expired.keys { table[key] = nil }
        return Array(expired.values)
    }

    /// The folder records in `directory`; one that cannot be read is removed, and, when it can be
    /// decoded, the hidden partial file and staging directory it names there.
    private static func read(_ directory: String) -> [Kept] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var kept: [Kept] = []
        for name in names where name.hasPrefix(".partial-") && name.hasSuffix(".folder") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path),
                let record = try? JSONDecoder().decode(FolderRecord.self, from: data)
            else {
                Platform.unlink(path)
                continue
            }
            guard record.isValid(in: directory) else {
                if let file = record.file?.partialPath, FolderRecord.isPartial(file, in: directory) {
                    Platform.unlink(file)
                }
                if let staging = record.stagingPath, FolderRecord.isPartial(staging, in: directory) {
                    Platform.removeTree(atPath: staging)
                }
                Platform.unlink(path)
                continue
            }
            kept.append(Kept(held: .record(record), recordPath: path, saved: record.saved))
        }
        return kept
    }
}
