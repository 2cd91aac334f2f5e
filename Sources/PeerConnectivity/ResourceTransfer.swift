import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// A resource (a file) on its way to a peer, made by ``Session/sendResource(at:withName:toPeer:)``.
///
/// ```swift
/// let transfer = try session.sendResource(at: fileURL, withName: "photo.jpg", toPeer: peer)
/// // bind transfer.progress to the UI; transfer.progress.cancel() (or transfer.cancel()) cancels it
/// try await transfer.wait()   // the peer has checked every block and kept the file
/// ```
public final class ResourceTransfer: Sendable {
    /// The name the resource was sent with.
    public let name: String
    /// The peer receiving it.
    public let peer: PeerID
    /// Bytes sent so far, of the file's length (for a folder: bytes of the files the peer has kept, of
    /// all the files' lengths). Cancelling it cancels the transfer on both sides.
    public let progress: Progress

    private let task: Task<Void, any Error>
    private let counts: @Sendable () -> ResourceTransferStatistics

    init(
        name: String,
        peer: PeerID,
        progress: Progress,
        task: Task<Void, any Error>,
        statistics: @escaping @Sendable () -> ResourceTransferStatistics
    ) {
        self.name = name
        self.peer = peer
        self.progress = progress
        self.task = task
        self.counts = statistics
    }

    /// What the transfer did so far: blocks and bytes sent and resumed, time spent reading and hashing.
    public var statistics: ResourceTransferStatistics { counts() }

    /// The bytes of the file written to the connection so far, over every attempt: less than its
    /// length when the peer held blocks of it from an interrupted transfer (see
    /// ``Foundation/ProgressUserInfoKey/resumedByteCountKey``), more when blocks crossed twice (a block
    /// the peer found damaged, a link that dropped).
    public var bytesSent: UInt64 { counts().bytesSent }

    /// Waits until the peer has received the whole file, checked its digests and kept it.
    ///
    /// Cancelling the waiting task does not cancel the transfer; ``cancel()`` does.
    ///
    /// - Throws: ``TransferError``: cancelled by either side, the file could not be read, the peer
    ///   refused it or found a mismatch, or the connection closed first.
    public func wait() async throws {
        do {
            try await task.value
        } catch let error as TransferError {
            throw error
        } catch {
            throw TransferError.failed(peer: peer, name: name, detail: "\(error)")
        }
    }

    /// Cancels the transfer, as `progress.cancel()`: the peer's side fails with
    /// ``TransferError/cancelledByPeer(peer:name:)`` and keeps no file; ``wait()`` throws
    /// ``TransferError/cancelled(peer:name:)``.
    public func cancel() {
        progress.cancel()
    }
}

extension ProgressUserInfoKey {
    /// The bytes of a resource that did not cross again because the receiver held them from an
    /// interrupted transfer (an `NSNumber`), in a ``ResourceTransfer``'s progress and in the receiver's.
    public static let resumedByteCountKey = ProgressUserInfoKey("PeerConnectivity.resumedByteCount")
}
