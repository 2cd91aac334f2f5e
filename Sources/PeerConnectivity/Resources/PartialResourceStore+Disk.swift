import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// The store's files: new partial files and their names, records written whole, and the records a
/// directory holds from an earlier run.
extension PartialResourceStore {
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

    /// The record file of a file's partial file.
    static func recordPath(for partialPath: String) -> String {
        partialPath + ".resume"
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

    /// Removes a file's partial file and its record.
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

    /// The records in the directory at `directory` that still hold: a file's whose partial file exists,
    /// cut with this protocol's block length; a folder's whose paths lie in the directory. A record that
    /// cannot be read or does not hold is removed, and with it, when it decodes, the partial file and
    /// staging directory it names there.
    static func read(_ directory: String) -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var entries: [Entry] = []
        for name in names where name.hasPrefix(".partial-") {
            let recordPath = directory + "/" + name
            if name.hasSuffix(".resume") {
                let partialPath = String(recordPath.dropLast(".resume".count))
                guard let data = FileManager.default.contents(atPath: recordPath),
                    let record = try? JSONDecoder().decode(PartialResourceRecord.self, from: data),
                    record.isValid, record.blockLength == WireProtocol.resourceBlockLength,
                    FileManager.default.fileExists(atPath: partialPath)
                else {
                    remove(partialPath)
                    continue
                }
                entries.append(
                    Entry(kept: .file(KeptFile(partialPath: partialPath, record: record)), recordPath: recordPath)
                )
            } else if name.hasSuffix(".folder") {
                guard let data = FileManager.default.contents(atPath: recordPath),
                    let record = try? JSONDecoder().decode(FolderRecord.self, from: data)
                else {
                    Platform.unlink(recordPath)
                    continue
                }
                guard record.isValid(in: directory) else {
                    if let file = record.file?.partialPath, FolderRecord.isPartial(file, in: directory) {
                        Platform.unlink(file)
                    }
                    if let staging = record.stagingPath, FolderRecord.isPartial(staging, in: directory) {
                        Platform.removeTree(atPath: staging)
                    }
                    Platform.unlink(recordPath)
                    continue
                }
                entries.append(Entry(kept: .folder(record), recordPath: recordPath))
            }
        }
        return entries
    }
}
