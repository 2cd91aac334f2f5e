/// What a folder received whole may still take of the disk, judged entry by entry before each file is
/// made: its entries against the inodes the file system had free when the transfer started, and its
/// files' room on disk (each rounded up to ``allocationUnit``, an empty one counting one unit, as a
/// file's inode and directory entry cost room too) against the bytes free then. Pure: the receiver
/// reads the file system's figures (`statvfs`) and asks before it writes.
///
/// The folder's announced size was judged against the free space when it was offered, as a resource's
/// is; this catches what that size hides: a stream of many small or empty files that takes far more of
/// the disk than its bytes.
package struct FolderBudget: Sendable, Equatable {
    /// Why an entry is refused.
    package enum Refusal: Error, Equatable, CustomStringConvertible {
        /// More entries than the file system had inodes free.
        case tooManyEntries(limit: UInt64)
        /// The folder's files would take more room than was free.
        case noSpace(needed: UInt64, free: UInt64)

        /// What is wrong, in a sentence.
        package var description: String {
            switch self {
            case .tooManyEntries(let limit):
                return "the folder has more than \(limit) entries, the file system's free inodes"
            case .noSpace(let needed, let free):
                return "the folder's files need at least \(needed) bytes on disk, \(free) were free"
            }
        }
    }

    /// The room on disk a file is counted to take at least, and the step it grows by: the common block
    /// size of Linux file systems.
    package static let allocationUnit: UInt64 = 4096

    /// Inodes free when the transfer started; `nil` when the file system does not say (it reports none,
    /// as some do that make inodes as needed).
    package let freeInodes: UInt64?
    /// Bytes free for an unprivileged user when the transfer started; `nil` when unknown.
    package let freeBytes: UInt64?
    /// Entries admitted so far.
    package private(set) var entries: UInt64 = 0
    /// Room on disk counted for them so far.
    package private(set) var bytes: UInt64 = 0

    /// A budget against the file system's free inodes and bytes; `nil` for a figure not known, which then
    /// limits nothing.
    package init(freeInodes: UInt64?, freeBytes: UInt64?) {
        self.freeInodes = freeInodes == 0 ? nil : freeInodes
        self.freeBytes = freeBytes
    }

    /// A budget that limits nothing.
    package static let unlimited = FolderBudget(freeInodes: nil, freeBytes: nil)

    /// The room on disk a file of `length` bytes is counted to take.
    package static func room(forLength length: UInt64) -> UInt64 {
        let units = length / allocationUnit + (length % allocationUnit == 0 ? 0 : 1)
        let counted = max(1, units)
        return counted > UInt64.max / allocationUnit ? .max : counted * allocationUnit
    }

    /// Admits an entry of `length` bytes, before its file is made.
    ///
    /// - Throws: ``Refusal`` when it would go over; the budget is then unchanged.
    package mutating func admit(length: UInt64) throws(Refusal) {
        if let freeInodes, entries >= freeInodes { throw .tooManyEntries(limit: freeInodes) }
        let room = Self.room(forLength: length)
        let (total, overflow) = bytes.addingReportingOverflow(room)
        if let freeBytes, overflow || total > freeBytes {
            throw .noSpace(needed: overflow ? .max : total, free: freeBytes)
        }
        entries += 1
        bytes = overflow ? .max : total
    }
}
