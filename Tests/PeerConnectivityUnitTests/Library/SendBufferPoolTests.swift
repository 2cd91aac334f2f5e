import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

/// `SendBufferPool` hands a buffer out again only once nobody else holds it.
@Suite("Send buffer pool")
struct SendBufferPoolTests {
    @Test("a buffer is handed out again once let go, never while it is held; middling ones are not pooled")
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

        let middling = pool.buffer(capacity: 4096)
        pool.recycle(middling)
        #expect(pool.count == 1)  // the second buffer; the third is out, the middling one is not kept
        #expect(!pool.holdsSmallBuffer)
    }

    @Test("a small frame's buffer comes back once written and let go; while it is held, a new one")
    func smallBuffer() throws {
        let pool = SendBufferPool(limit: 4)
        var pins: [ByteBuffer] = []
        var held: EncodedFrame?
        var first: UInt?
        var second: UInt?
        for round in 0..<3 {
            // Memory freed since the last round goes to the pin, not to this round's frame: an address seen
            // again is a buffer the pool kept, not malloc handing the same memory out again.
            pins.append(Self.pin())
            let message = [UInt8](repeating: UInt8(round), count: 64)
            let frame = message.withUnsafeBytes { FrameEncoder.dataFrame($0, makeBuffer: pool.buffer(capacity:)) }
            pool.recycle(frame)
            let address = frame.head.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
            switch round {
            case 0:
                first = address
                held = frame  // queued, not yet written
            case 1:
                second = address
                #expect(address != first)
                var wire = try #require(held).head
                let parsed = try FrameParser.parse(&wire, maximumFrameLength: 1 << 20)
                #expect(parsed == .data(ByteBuffer(repeating: 0, count: 64)))
                held = nil  // written and let go; the pool keeps this round's buffer
            default:
                #expect(address == second)
            }
            var wire = frame.head
            #expect(try FrameParser.parse(&wire, maximumFrameLength: 1 << 20) == .data(ByteBuffer(bytes: message)))
        }
        #expect(pool.holdsSmallBuffer)
        #expect(pool.count == 0)
    }

    @Test("in a conversation of one small frame at a time, each frame is made in the same buffer")
    func smallConversation() throws {
        let pool = SendBufferPool(limit: 4)
        var pins: [ByteBuffer] = []
        var addresses: Set<UInt> = []
        for round in 0..<100 {
            pins.append(Self.pin())  // as above
            let message = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 1 + round)
            let frame = message.withUnsafeBytes { FrameEncoder.dataFrame($0, makeBuffer: pool.buffer(capacity:)) }
            pool.recycle(frame)
            addresses.insert(frame.head.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) })
            var wire = frame.head
            #expect(try FrameParser.parse(&wire, maximumFrameLength: 1 << 20) == .data(ByteBuffer(bytes: message)))
        }
        #expect(addresses.count == 1)
    }

    /// A buffer of a small frame's size, held by the test so that malloc cannot give its memory to the next frame.
    private static func pin() -> ByteBuffer {
        var pin = ByteBufferAllocator().buffer(capacity: SendBufferPool.smallCapacity)
        pin.writeInteger(UInt8(1))
        return pin
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
