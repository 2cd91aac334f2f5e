import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

/// `SendBufferPool` hands a buffer out again only once nobody else holds it.
@Suite("Send buffer pool")
struct SendBufferPoolTests {
    @Test("a buffer is handed out again once let go, never while it is held; small ones are not pooled")
    func reuse() {
        let pool = SendBufferPool(limit: 4)
        var first = pool.buffer(capacity: SendBufferPool.bufferCapacity)
        first.writeRepeatingByte(1, count: 100)
        let address = first.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        pool.recycle(first)
        #expect(pool.count == 1)

        // Still held (as if queued for the socket): a new buffer, and the held bytes stay as they were.
        var second = pool.buffer(capacity: SendBufferPool.bufferCapacity)
        second.writeRepeatingByte(2, count: 100)
        #expect(second.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } != address)
        #expect(first.readableBytesView.allSatisfy { $0 == 1 })
        pool.recycle(second)

        // Let go (written): the same memory comes back, empty.
        first = ByteBuffer()
        second = ByteBuffer()
        let third = pool.buffer(capacity: 40_000)
        #expect(third.readableBytes == 0)
        #expect(third.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == address)

        let small = pool.buffer(capacity: 64)
        pool.recycle(small)
        #expect(pool.count == 1)  // the second buffer; the third is out, the small one is not kept
    }

    @Test("the pool keeps at most its limit; a DATA frame's pooled buffers carry the message")
    func limitAndFrames() throws {
        let pool = SendBufferPool(limit: 3)
        let message = [UInt8]((0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var frames: [EncodedFrame] = []
        for _ in 0..<3 {
            let frame = message.withUnsafeBytes { FrameEncoder.dataFrame($0, makeBuffer: pool.buffer(capacity:)) }
            pool.recycle(frame)
            frames.append(frame)
        }
        #expect(pool.count == 3)
        for frame in frames {
            var wire = frame.head
            for var chunk in frame.rest { wire.writeBuffer(&chunk) }
            let decoded = try FrameParser.parse(&wire, maximumFrameLength: 1 << 20)
            #expect(decoded == .data(ByteBuffer(bytes: message)))
        }
    }
}
