import Crypto
import Foundation
import NIOCore
import NIOPosix
import PeerConnectivityCore
import PeerConnectivityTransport
import SystemPackage

/// Sends one file on a resource channel: reads it in blocks on NIO's thread pool (never whole),
/// hashes each block, cuts it into CHUNK frames that wait for the peer's credit, then sends END with
/// the SHA-256 and waits for the peer's DONE.
struct ResourceSender: Sendable {
    /// Bytes read from disk at a time.
    static let blockLength = 1 << 20

    let descriptor: SystemPackage.FileDescriptor
    let size: UInt64
    let connection: Connection
    let channel: UInt32
    let progress: Progress
    let name: String
    let peer: PeerID

    /// Runs the transfer to its end; closes the file whatever happens.
    func run() async throws {
        defer { try? descriptor.close() }
        do {
            try await send()
        } catch {
            let failure = transferError(for: error)
            // Tells the peer unless the channel has already ended (then this does nothing).
            connection.resetChannel(channel, failure == .cancelled(peer: peer, name: name) ? .cancelled : .failed)
            throw failure
        }
    }

    private func send() async throws {
        var hasher = SHA256()
        var offset: UInt64 = 0
        let allocator = connection.allocator
        while offset < size {
            try Task.checkCancellation()
            let length = Int(min(UInt64(Self.blockLength), size - offset))
            let block = try await NIOThreadPool.singleton.runIfActive { [descriptor, offset] in
                try Self.read(descriptor, at: offset, length: length, allocator: allocator)
            }
            block.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            var chunkOffset = 0
            while chunkOffset < block.readableBytes {
                let chunkLength = min(FrameEncoder.chunkPayloadLength, block.readableBytes - chunkOffset)
                let frame = block.withUnsafeReadableBytes { bytes in
                    FrameEncoder.chunkFrame(
                        channel: channel,
                        UnsafeRawBufferPointer(rebasing: bytes[chunkOffset..<chunkOffset + chunkLength]),
                        makeBuffer: connection.sendBuffers.buffer(capacity:)
                    )
                }
                try await connection.sendChunk(frame, payloadLength: chunkLength, on: channel)
                progress.completedUnitCount += Int64(chunkLength)
                chunkOffset += chunkLength
            }
            offset += UInt64(length)
        }
        try connection.finishChannel(channel, digest: Array(hasher.finalize()))
        try await connection.waitForDone(on: channel)
    }

    /// Reads exactly `length` bytes at `offset`, or throws (the file shrank, or an I/O error).
    private static func read(
        _ descriptor: SystemPackage.FileDescriptor,
        at offset: UInt64,
        length: Int,
        allocator: ByteBufferAllocator
    ) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: length)
        var filled = 0
        while filled < length {
            let wanted = length - filled
            let count: Int
            do {
                count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { space in
                    try descriptor.read(
                        fromAbsoluteOffset: Int64(offset) + Int64(filled),
                        into: UnsafeMutableRawBufferPointer(rebasing: space[0..<wanted])
                    )
                }
            } catch {
                throw POSIXFailure("read", (error as? SystemPackage.Errno) ?? .ioError)
            }
            if count == 0 { throw POSIXFailure("read: the file is shorter than when the transfer started", .ioError) }
            filled += count
        }
        return buffer
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
