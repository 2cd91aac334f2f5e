import NIOCore
import PeerConnectivityCore
import Synchronization

/// Buffers for the bodies of outbound frames, used again once the socket has written them.
///
/// Large messages and channel chunks are copied into buffers of about 64 KiB before they are queued.
/// Allocated and freed one per chunk, they make malloc hand memory back to the kernel and take it
/// again: an `madvise`, page faults on the next touch, and a TLB shootdown across threads each time
/// (a fifth of the CPU time of a stream of 1 MiB messages on loopback, in `perf`). The pool keeps
/// every buffer it hands out, oldest first, and hands the oldest out again once nobody else holds it
/// (the event loop has written it and let go); frames are written in order, so the oldest is the
/// first to come free.
///
/// A small frame (a message of up to ``smallCapacity`` bytes with its header) has a place of its own
/// for one buffer, the last one handed out: each took an allocation and a free of its buffer and of
/// the buffer's storage object, which a round trip of small messages paid at both ends, and in a
/// conversation of one message at a time the last frame has been written by the time the next is
/// made. Under a burst of small frames the buffer is still queued and a new one is allocated.
package final class SendBufferPool: Sendable {
    /// The capacity of a pooled buffer: one piece of a large DATA frame, or one CHUNK frame of
    /// ``FrameEncoder/chunkPayloadLength``, header included (64 KiB).
    package static let bufferCapacity = FrameEncoder.chunkLength

    /// How many buffers the pool keeps at most (256 of 64 KiB: 16 MiB, as much as can be in flight:
    /// the outbound queue's high watermark, the channel's write buffer, and one batch between them).
    package static let defaultLimit = 256

    /// The capacity of a pooled small buffer: a DATA frame of up to 251 bytes, header included.
    package static let smallCapacity = 256

    private let limit: Int
    private let allocator: ByteBufferAllocator
    private let buffers: Mutex<CircularBuffer<ByteBuffer>>
    private let smallBuffer: Mutex<ByteBuffer?>

    /// Makes an empty pool.
    ///
    /// - Parameters:
    ///   - limit: how many buffers to keep at most.
    ///   - allocator: where new buffers come from.
    package init(limit: Int = SendBufferPool.defaultLimit, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        precondition(limit > 0, "a pool keeps at least one buffer")
        self.limit = limit
        self.allocator = allocator
        self.buffers = Mutex(CircularBuffer(initialCapacity: limit))
        self.smallBuffer = Mutex(nil)
    }

    /// An empty buffer with room for `capacity` bytes: a pooled one when `capacity` is over half of
    /// ``bufferCapacity`` or at most ``smallCapacity`` (give it back with ``recycle(_:)`` once written
    /// into), else a new one.
    ///
    /// - Parameter capacity: the bytes the caller will write.
    /// - Returns: a buffer the caller alone holds.
    package func buffer(capacity: Int) -> ByteBuffer {
        if capacity <= Self.smallCapacity {
            let reused = smallBuffer.withLock { kept -> ByteBuffer? in
                guard var buffer = kept.take() else { return nil }
                guard buffer.modifyIfUniquelyOwned({ $0.clear() }) != nil else {
                    kept = buffer  // still queued: it may be free for the next frame
                    return nil
                }
                return buffer
            }
            return reused ?? allocator.buffer(capacity: Self.smallCapacity)
        }
        guard capacity > Self.bufferCapacity / 2, capacity <= Self.bufferCapacity else {
            return allocator.buffer(capacity: capacity)
        }
        let reused = buffers.withLock { buffers -> ByteBuffer? in
            // Moved out first: a copy through the subscript would count as a second owner.
            guard var oldest = buffers.popFirst() else { return nil }
            guard oldest.modifyIfUniquelyOwned({ $0.clear() }) != nil else {
                buffers.prepend(oldest)
                return nil
            }
            return oldest
        }
        return reused ?? allocator.buffer(capacity: Self.bufferCapacity)
    }

    /// Keeps a buffer from ``buffer(capacity:)``, now written into, to hand out again once the
    /// socket has written it. Other buffers are ignored.
    ///
    /// - Parameter buffer: the buffer, as queued.
    package func recycle(_ buffer: ByteBuffer) {
        if buffer.capacity >= Self.bufferCapacity {
            buffers.withLock { keep(buffer, in: &$0) }
        } else if buffer.capacity == Self.smallCapacity {
            smallBuffer.withLock { $0 = buffer }
        }
    }

    /// Keeps the pooled buffers of an encoded frame (see ``recycle(_:)``), under one lock.
    ///
    /// - Parameter frame: the frame, as queued.
    package func recycle(_ frame: EncodedFrame) {
        guard frame.head.capacity >= Self.bufferCapacity else {
            recycle(frame.head)  // a small message: its one buffer, kept if it is a small pooled one
            return
        }
        buffers.withLock { buffers in
            keep(frame.head, in: &buffers)
            for chunk in frame.rest where chunk.capacity >= Self.bufferCapacity { keep(chunk, in: &buffers) }
        }
    }

    private func keep(_ buffer: ByteBuffer, in buffers: inout CircularBuffer<ByteBuffer>) {
        if buffers.count >= limit { buffers.removeFirst() }
        buffers.append(buffer)
    }

    /// How many buffers of about 64 KiB the pool holds (tests).
    package var count: Int { buffers.withLock { $0.count } }

    /// Whether the pool holds a small buffer (tests).
    package var holdsSmallBuffer: Bool { smallBuffer.withLock { $0 != nil } }
}
