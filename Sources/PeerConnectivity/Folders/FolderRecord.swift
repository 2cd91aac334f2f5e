import Foundation
import PeerConnectivityCore

/// What is kept on disk of a folder received as one channel and cut short, so that its sender can resume
/// it after this process restarts: whose it is, the blocks taken, where the stream's reading stood, the
/// file being written, and the staging directory holding the files written. Stored as JSON in
/// `.partial-<id>.folder` in the receive directory (``PartialResourceStore``).
///
/// The blocks taken cannot be hashed again (their bytes are in files already written): the sender's check
/// of HAVE's digest against its own stream is what keeps a different folder from resuming, and a folder
/// kept under one ``BlockDigestKind`` starts again on a link of the other.
struct FolderRecord: Codable, Sendable {
    /// The file being written when the folder was cut short.
    struct OpenFile: Codable, Sendable {
        /// Its hidden partial file, in the receive directory.
        var partialPath: String
        /// Its path in the folder, as sent.
        var name: [UInt8]
        /// Its bytes written.
        var written: UInt64
    }

    /// The sending peer's id.
    var peer: UUID
    /// The folder's name as the sender gave it.
    var name: [UInt8]
    /// The folder stream's length.
    var size: UInt64
    /// The digests of the blocks taken, block 0 first.
    var digests: [[UInt8]]
    /// The hash they were made with; `nil` in a record written before XXH3-64, whose digests are XXH64.
    var digestKind: BlockDigestKind?
    /// Where the reading of the stream stood after them.
    var parser: FolderStreamParser
    /// The file being written, if the blocks taken end inside one.
    var file: OpenFile?
    /// The hidden staging directory holding the files placed (`.partial-<id>.d` in the receive
    /// directory); a record without one (written before folders were staged) is not taken up.
    var stagingPath: String?
    /// When it was kept.
    var saved: Date

    /// The bytes of the blocks taken, as the store's byte limit counts them.
    var heldBytes: UInt64 {
        let layout = ResourceLayout(size: size)
        return layout.bytes(in: 0..<min(digests.count, layout.blockCount))
    }

    /// Whether it describes a folder that can be: blocks within the stream, a parser at their end, a
    /// partial file and a staging directory in `directory` (a record read from disk is not trusted
    /// further).
    func isValid(in directory: String) -> Bool {
        let layout = ResourceLayout(size: size)
        guard layout.fitsProtocol, !digests.isEmpty, digests.count <= layout.blockCount, parser.size == size,
            parser.isConsistent, parser.consumed == layout.bytes(in: 0..<digests.count),
            digests.allSatisfy({ $0.count == WireProtocol.blockDigestLength })
        else { return false }
        guard let stagingPath, Self.isPartial(stagingPath, in: directory) else { return false }
        guard let file else { return true }
        return Self.isPartial(file.partialPath, in: directory)
    }

    /// Whether `path` names a hidden partial entry right inside `directory`.
    static func isPartial(_ path: String, in directory: String) -> Bool {
        let prefix = directory + "/.partial-"
        return path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/")
    }
}
