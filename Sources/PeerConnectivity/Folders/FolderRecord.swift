import Foundation
import PeerConnectivityCore

/// What is kept on disk of a folder received as one channel and cut short, so that its sender can resume
/// it after this process restarts: whose it is, the blocks taken, where the stream's reading stood, and
/// the file being written. Stored as JSON in `.partial-<id>.folder` in the receive directory
/// (``KeptFolders``).
///
/// The blocks taken cannot be hashed again (their bytes are in files already placed): the sender's check
/// of HAVE's digest against its own stream is what keeps a different folder from resuming.
struct FolderRecord: Codable, Sendable {
    /// The file being written when the folder was cut short.
    struct OpenFile: Codable, Sendable {
        /// Its hidden partial file, in the receive directory.
        var partialPath: String
        /// The name it is placed under: the folder's name, "/", its path.
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
    /// Where the reading of the stream stood after them.
    var parser: FolderStreamParser
    /// The file being written, if the blocks taken end inside one.
    var file: OpenFile?
    /// Where the folder landed, once a file was placed.
    var folderPath: String?
    /// When it was kept.
    var saved: Date

    /// Whether it describes a folder that can be: blocks within the stream, a parser at their end, a
    /// partial file in `directory` (a record read from disk is not trusted further).
    func isValid(in directory: String) -> Bool {
        let layout = ResourceLayout(size: size)
        guard layout.fitsProtocol, !digests.isEmpty, digests.count <= layout.blockCount, parser.size == size,
            parser.isConsistent, parser.consumed == layout.bytes(in: 0..<digests.count),
            digests.allSatisfy({ $0.count == WireProtocol.blockDigestLength })
        else { return false }
        guard let file else { return true }
        let prefix = directory + "/.partial-"
        return file.partialPath.hasPrefix(prefix) && !file.partialPath.dropFirst(prefix.count).contains("/")
    }
}
