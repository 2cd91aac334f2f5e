import Foundation
import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// Sends one file on a resource channel, block by block: waits for the peer's HAVE, checks the blocks
/// the peer holds against the file (their digests must match, else every block is sent), then sends
/// each other block as a BLOCK frame with its digest (of the link's ``BlockDigestKind``) and CHUNKs that
/// wait for the peer's credit; END carries the root digest, and the peer's DONE ends the transfer.
///
/// Blocks are read and hashed ahead on the ``FileExecutor``, several at once (``readAhead``), so that
/// hashing runs on other cores while earlier blocks are on the wire. A peer that finds a block
/// damaged resets the channel (block mismatch) keeping the blocks it checked; the sender then opens
/// the resource again, and the peer's HAVE leaves only the damaged blocks to send, up to
/// ``maximumAttempts`` times.
struct ResourceSender: Sendable {
    /// Blocks read and hashed ahead of the one being sent.
    static let readAhead = 4
    /// How many times a resource is opened, the first included, when the peer finds damaged blocks.
    static let maximumAttempts = 4
    /// How many times a resource goes on over a resumed link (reconnection) before the drop fails it.
    static let maximumResumes = 16

    let source: any ResourceSource
    let size: UInt64
    /// A resource, or a folder sent as one (``ChannelKind/folder``), whose receiver keeps and offers only
    /// the blocks before the first it did not take.
    let kind: ChannelKind
    /// The connection and channel being written on now: new ones after a block mismatch or a drop.
    let channel: ResourceSendRecord
    let progress: Progress
    let name: String
    let peer: PeerID
    /// The hash of the block digests, as the link to `peer` agreed (it holds across the link's resumes).
    let digestKind: BlockDigestKind
    /// Waits for the link to `peer` to come back after a connection dropped, and returns the new one;
    /// throws when it does not (reconnection off, or the window ended).
    let resumedConnection: @Sendable (Connection) async throws -> Connection

    /// Runs the transfer to its end; closes the source whatever happens.
    func run() async throws {
        defer { source.close() }
        let layout = ResourceLayout(size: size)
        var digests = [[UInt8]?](repeating: nil, count: layout.blockCount)
        var attempts = 1
        var resumes = 0
        while true {
            let (connection, number) = channel.current
            do {
                try await send(on: number, of: connection, layout: layout, digests: &digests)
                return
            } catch let error as ChannelClosedError
                where error.cause == .reset(.blockMismatch, byPeer: true) && attempts < Self.maximumAttempts
            {
                // The peer kept the blocks it checked; open again and send the others.
                connection.resetChannel(number, .failed)
                attempts += 1
                try reopen(on: connection)
            } catch let closed as ChannelClosedError
                where Self.isConnectionLoss(closed) && resumes < Self.maximumResumes
            {
                connection.resetChannel(number, .failed)
                let resumed: Connection
                do {
                    resumed = try await resumedConnection(connection)
                } catch is CancellationError {
                    throw TransferError.cancelled(peer: peer, name: name)
                } catch {
                    // Not resumed: the transfer ends with the connection it was on.
                    throw TransferError.from(closed, peer: peer, name: name)
                }
                try Task.checkCancellation()
                resumes += 1
                try reopen(on: resumed)
            } catch {
                let failure = transferError(for: error)
                // Tells the peer unless the channel has already ended (then this does nothing).
                connection.resetChannel(number, failure == .cancelled(peer: peer, name: name) ? .cancelled : .failed)
                throw failure
            }
        }
    }

    /// Opens the resource again on `connection`.
    private func reopen(on connection: Connection) throws {
        channel.count { $0.reopenings += 1 }
        do {
            let number = try connection.openChannel(kind: kind, size: size, name: Array(name.utf8))
            channel.current = (connection, number)
        } catch let closed as ConnectionClosedError {
            throw TransferError.connectionClosed(closed.reason, peer: peer, name: name)
        }
        // Cancelled meanwhile: the handler reset the old channel, not this one.
        if progress.isCancelled { channel.reset(.cancelled) }
    }

    /// The connection closed under the channel: with reconnection the link may come back.
    private static func isConnectionLoss(_ error: ChannelClosedError) -> Bool {
        if case .connectionClosed = error.cause { return true }
        return false
    }

    private func send(
        on number: UInt32,
        of connection: Connection,
        layout: ResourceLayout,
        digests: inout [[UInt8]?]
    ) async throws {
        let have = try await connection.waitForHave(on: number)
        guard let held = layout.blocks(inBitmap: have.bitmap) else {
            throw TransferError.failed(peer: peer, name: name, detail: "the peer's HAVE does not fit the resource")
        }
        var skipped = Set<Int>()
        // Each attempt counts from what the peer holds (nothing, unless it matches).
        progress.completedUnitCount = 0
        if !held.isEmpty {
            try await hash(held, layout: layout, allocator: connection.allocator, into: &digests)
            if ResourceFileIO.heldDigest(held.map { digests[$0]! }) == have.digest {
                skipped = Set(held)
                let resumed = layout.bytes(in: held)
                channel.count {
                    $0.blocksResumed = held.count
                    $0.bytesResumed = resumed
                }
                progress.completedUnitCount = Int64(clamping: resumed)
                progress.setUserInfoObject(NSNumber(value: resumed), forKey: .resumedByteCountKey)
            }
        }
        let toSend = (0..<layout.blockCount).filter { !skipped.contains($0) }
        let sendBuffers = connection.sendBuffers
        var reader = BlockReadAhead(
            blocks: toSend,
            source: source,
            layout: layout,
            allocator: connection.allocator,
            digestKind: digestKind,
            statistics: channel,
            framesFor: number,
            makeBuffer: { sendBuffers.buffer(capacity: $0) }
        )
        do {
            while let (index, frames, digest) = try await reader.next() {
                digests[index] = digest
                try connection.startBlock(index, digest: digest, on: number)
                for frame in frames {
                    let length = frame.readableBytes - FrameEncoder.chunkHeaderLength
                    try await connection.sendChunk(frame, payloadLength: length, on: number)
                    progress.completedUnitCount = min(
                        progress.totalUnitCount,
                        progress.completedUnitCount + Int64(length)
                    )
                }
                // Counted once a block, not once a chunk: the count takes a lock.
                channel.count {
                    $0.blocksSent += 1
                    $0.bytesSent += UInt64(layout.length(of: index))
                }
            }
        } catch {
            await reader.stop()
            throw error
        }
        let root = ResourceFileIO.digest(of: layout.rootInput(digests: digests.map { $0! }))
        try connection.finishChannel(number, digest: root)
        try await connection.waitForDone(on: number)
    }

    /// Hashes `blocks` of the file (those the peer says it holds), without sending them.
    private func hash(
        _ blocks: [Int],
        layout: ResourceLayout,
        allocator: ByteBufferAllocator,
        into digests: inout [[UInt8]?]
    ) async throws {
        let missing = blocks.filter { digests[$0] == nil }
        var reader = BlockReadAhead(
            blocks: missing,
            source: source,
            layout: layout,
            allocator: allocator,
            digestKind: digestKind,
            statistics: channel
        )
        do {
            while let (index, _, digest) = try await reader.next() {
                digests[index] = digest
            }
        } catch {
            await reader.stop()
            throw error
        }
    }

    private func transferError(for error: any Error) -> TransferError {
        switch error {
        case let error as ChannelClosedError: return .from(error, peer: peer, name: name)
        case let error as TransferError: return error
        case is CancellationError: return .cancelled(peer: peer, name: name)
        default: return .failed(peer: peer, name: name, detail: "\(error)")
        }
    }
}
