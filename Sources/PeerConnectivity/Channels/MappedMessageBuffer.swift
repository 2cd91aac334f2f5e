import Foundation
import NIOCore
import PeerConnectivityTransport

/// The bytes of one large message being gathered, in memory mapped for it alone
/// (``Platform/mapMemory(_:)``), so that they go back to the kernel when the message is dropped or the
/// application lets go of it, rather than stay with the allocator (see `Platform+Memory.swift`). Pages are
/// taken only as chunks are written into them.
///
/// Not thread-safe: its owner (``MessageReceiver``) holds it under its lock.
final class MappedMessageBuffer {
    private var base: UnsafeMutableRawPointer?
    private let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0

    /// Maps `capacity` bytes.
    ///
    /// - Returns: nil when the kernel gives no memory.
    init?(capacity: Int) {
        guard let base = Platform.mapMemory(capacity) else { return nil }
        self.base = base
        self.capacity = capacity
    }

    /// Copies `bytes` after those written; what does not fit is not written (the channel table lets no more
    /// than the announced size through).
    func append(_ bytes: ByteBuffer) {
        guard let base else { return }
        bytes.withUnsafeReadableBytes { source in
            let length = min(source.count, capacity - count)
            guard length > 0 else { return }
            (base + count).copyMemory(from: source.baseAddress!, byteCount: length)
            count += length
        }
    }

    /// Hands the bytes written over as `Data`, without a copy: the mapping goes back to the kernel when the
    /// last copy of that `Data` is released. The buffer is empty afterwards.
    func takeData() -> Data {
        guard let base else { return Data() }
        self.base = nil
        let mapped = capacity
        return Data(
            bytesNoCopy: base,
            count: count,
            deallocator: .custom { address, _ in
                Platform.unmapMemory(address, count: mapped)
            }
        )
    }

    deinit {
        if let base { Platform.unmapMemory(base, count: capacity) }
    }
}
