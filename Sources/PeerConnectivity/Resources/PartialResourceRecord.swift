import Foundation
import PeerConnectivityCore

/// What is kept beside an interrupted resource's partial file, so that the same sender can resume
/// it: whose it is, which resource, and which blocks were checked. Stored as JSON in
/// `.partial-<id>.resume`, beside `.partial-<id>`.
///
/// The blocks listed are hashed again before a resume offers them (unless this process kept their
/// digests in memory when it checked them), so a record that claims more
/// than the file holds (a crash between a write and the record, a disk error) costs a block resent,
/// never a wrong file.
struct PartialResourceRecord: Codable, Sendable, Equatable {
    /// The sending peer's id.
    var peer: UUID
    /// The resource's name as the sender gave it (bytes, untrusted).
    var name: [UInt8]
    /// The resource's length.
    var size: UInt64
    /// The block length the blocks were cut with.
    var blockLength: Int
    /// The blocks checked, in order.
    var blocks: [Int]
    /// When the record was last written.
    var saved: Date

    /// Whether this record is for `name` of `size` bytes from `peer`, cut with `blockLength`.
    func matches(peer: UUID, name: [UInt8], size: UInt64, blockLength: Int) -> Bool {
        self.peer == peer && self.name == name && self.size == size && self.blockLength == blockLength
    }

    /// Whether it describes blocks that can exist: a positive block length of at most 64 MiB, and
    /// blocks within the resource (a record read from disk is not trusted further).
    var isValid: Bool {
        guard (1...(64 << 20)).contains(blockLength), name.count <= 16 << 10 else { return false }
        let layout = ResourceLayout(size: size, blockLength: blockLength)
        return layout.fitsProtocol && blocks.allSatisfy { (0..<layout.blockCount).contains($0) }
    }

    /// The bytes its blocks hold (those within the resource).
    var heldBytes: UInt64 {
        let layout = ResourceLayout(size: size, blockLength: max(1, blockLength))
        return layout.bytes(in: blocks.filter { (0..<layout.blockCount).contains($0) })
    }
}
