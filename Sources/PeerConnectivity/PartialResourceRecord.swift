import Foundation

/// What is kept beside an interrupted resource's partial file, so that the same sender can resume
/// it: whose it is, which resource, and which blocks were checked. Stored as JSON in
/// `.partial-<id>.resume`, beside `.partial-<id>`.
///
/// The blocks listed are hashed again before a resume offers them, so a record that claims more
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

    /// The bytes its blocks hold.
    var heldBytes: UInt64 {
        blocks.reduce(0) { total, index in
            total + min(UInt64(blockLength), size - UInt64(index) * UInt64(blockLength))
        }
    }
}
