import Crypto
import Dispatch
import NIOCore
import PeerConnectivityCore
import Synchronization
import SystemPackage

/// Reading, writing and hashing a resource's blocks in its file, for both ends of a transfer. Called
/// off the event loop, on the ``FileExecutor`` (a read ahead, a received transfer's queue).
enum ResourceFileIO {
    /// Reads exactly `length` bytes at `offset` into a new buffer.
    ///
    /// - Throws: ``POSIXFailure`` when the read fails or the file is shorter than that.
    static func read(
        _ descriptor: SystemPackage.FileDescriptor,
        at offset: UInt64,
        length: Int,
        allocator: ByteBufferAllocator
    ) throws -> ByteBuffer {
        var buffer = allocator.buffer(capacity: length)
        try read(descriptor, at: offset, length: length, into: &buffer)
        return buffer
    }

    /// Reads exactly `length` bytes at `offset`, appended to `buffer`.
    ///
    /// - Throws: ``POSIXFailure`` when the read fails or the file is shorter than that.
    static func read(
        _ descriptor: SystemPackage.FileDescriptor,
        at offset: UInt64,
        length: Int,
        into buffer: inout ByteBuffer
    ) throws {
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
            if count == 0 { throw POSIXFailure("read: the file is shorter than its announced length", .ioError) }
            filled += count
        }
    }

    /// Writes all of `bytes` at `offset`.
    ///
    /// - Throws: ``POSIXFailure`` when a write fails.
    static func write(
        _ bytes: UnsafeRawBufferPointer,
        at offset: UInt64,
        to descriptor: SystemPackage.FileDescriptor
    ) throws {
        var written = 0
        do {
            while written < bytes.count {
                written += try descriptor.write(
                    toAbsoluteOffset: Int64(offset) + Int64(written),
                    UnsafeRawBufferPointer(rebasing: bytes[written...])
                )
            }
        } catch {
            throw POSIXFailure("write", (error as? SystemPackage.Errno) ?? .ioError)
        }
    }

    /// The block digest (``BlockHasher``) of `kind` of a buffer's readable bytes.
    static func blockDigest(_ buffer: ByteBuffer, _ kind: BlockDigestKind) -> [UInt8] {
        buffer.withUnsafeReadableBytes { BlockHasher.digest($0, kind) }
    }

    /// The SHA-256 over a list of digests, in order: a HAVE's digest, or (over a layout's root input)
    /// a resource's root.
    static func digest(of bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    /// The HAVE's digest over the digests of the blocks held, in order.
    static func heldDigest(_ digests: [[UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        for digest in digests { hasher.update(data: digest) }
        return Array(hasher.finalize())
    }

    /// Reads and hashes `blocks` of the file, on all cores; a block that cannot be read is left out.
    ///
    /// - Returns: each readable block's digest (``BlockHasher``) of `kind`, by index.
    static func hashBlocks(
        _ blocks: [Int],
        of descriptor: SystemPackage.FileDescriptor,
        layout: ResourceLayout,
        kind: BlockDigestKind
    ) -> [Int: [UInt8]] {
        let results = Mutex<[Int: [UInt8]]>([:])
        let allocator = ByteBufferAllocator()
        DispatchQueue.concurrentPerform(iterations: blocks.count) { position in
            let index = blocks[position]
            guard
                let buffer = try? read(
                    descriptor,
                    at: layout.offset(of: index),
                    length: layout.length(of: index),
                    allocator: allocator
                )
            else { return }
            let digest = blockDigest(buffer, kind)
            results.withLock { $0[index] = digest }
        }
        return results.withLock { $0 }
    }
}
