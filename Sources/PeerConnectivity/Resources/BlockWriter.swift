import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// What a ``BlockReceiver`` writes its blocks with: the part of a received resource or folder that
/// knows its files (``FileWriter`` for one file, ``FolderWriter`` for a folder sent as one stream).
///
/// A pure value driven by its receiver's queue, one call at a time, outside any lock: it opens or takes
/// up what an earlier transfer kept, takes BLOCK and the bytes after it, checks what it takes, and at
/// END puts the whole thing in its place. A failure it throws ends the transfer; its receiver tells the
/// sender and then calls ``finish(keep:)``, which closes what is open and keeps it for a resume or
/// removes it.
protocol BlockWriter: Sendable {
    /// The name the sender gave the resource or folder.
    var name: String { get }
    /// Which transfer this is in the ``PartialResourceStore``, whose mark keeps a resume from starting
    /// before the transfer it resumes has kept its blocks.
    var storeKey: PartialResourceStore.Key { get }

    /// Opens what the transfer writes to, taking up what an earlier transfer of it kept.
    ///
    /// - Returns: HAVE for the sender, and the bytes already held (counted as done).
    mutating func open() throws(BlockWriteFailure) -> (have: Frame.Have, resumed: UInt64)

    /// BLOCK: the next bytes are block `index`, whose block digest is `digest`.
    ///
    /// - Returns: the bytes once counted as held that will cross again (the sender did not take what
    ///   HAVE offered), to take off the progress.
    mutating func blockStarted(_ index: Int, digest: [UInt8]) throws(BlockWriteFailure) -> UInt64

    /// Bytes of the current block, within the window.
    ///
    /// - Returns: the bytes to count in the progress, and the bytes whose credit goes back to the
    ///   sender: a block's length once it is whole, written and checked, else 0.
    mutating func received(_ bytes: ByteBuffer) throws(BlockWriteFailure) -> (progressed: Int, checked: Int)

    /// END: every block must be in and the root digest hold; then the file or folder takes its name.
    ///
    /// - Returns: where it now is.
    mutating func ended(root: [UInt8]?) throws(BlockWriteFailure) -> URL

    /// The transfer is over, whatever ended it: closes what is open; keeps the checked blocks for a
    /// resume when `keep`, else removes what was written. Called once, last.
    mutating func finish(keep: Bool)
}
