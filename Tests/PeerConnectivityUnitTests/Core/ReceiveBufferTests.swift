import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

/// `ReceiveBuffer`: the bytes a connection handler keeps between reads, decoded in memory.
@Suite("Frame reader")
struct ReceiveBufferTests {
    private static let frames: [Frame] = [
        .keepalive,
        .data(Fixtures.pattern(count: 1)),
        .data(Fixtures.pattern(count: 200_000)),  // gathered into a buffer of its own
        .goodbye(.protocolViolation),
        .data(Fixtures.pattern(count: 5000)),
    ]

    private static func encoded(_ frames: [Frame]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for frame in frames { FrameEncoder.encode(frame, into: &buffer) }
        return buffer
    }

    private static func reader() -> ReceiveBuffer {
        ReceiveBuffer(limit: FrameLengthLimit(Fixtures.sessionLimit))
    }

    /// Appends `bytes` in reads of `readLength` bytes, taking every frame after each read.
    private static func decode(_ bytes: ByteBuffer, readLength: Int, into reader: inout ReceiveBuffer) throws -> [Frame]
    {
        var bytes = bytes
        var frames: [Frame] = []
        while let read = bytes.readSlice(length: min(readLength, bytes.readableBytes)), read.readableBytes > 0 {
            reader.append(read)
            while let frame = try reader.next(allocator: ByteBufferAllocator()) { frames.append(frame) }
        }
        return frames
    }

    @Test("frames come out whole and in order however the reads split them", arguments: [1, 7, 4096, 1 << 20])
    func splitReads(readLength: Int) throws {
        var reader = Self.reader()
        #expect(try Self.decode(Self.encoded(Self.frames), readLength: readLength, into: &reader) == Self.frames)
        try reader.finish()
        #expect(reader.takeUndecoded() == nil)
    }

    @Test("the bytes past the last frame taken are handed back untouched (the start of a TLS handshake)")
    func undecodedBytes() throws {
        var reader = Self.reader()
        var bytes = Self.encoded([.keepalive])
        bytes.writeBytes([0x16, 0x03, 0x01, 0x00, 0x05])  // what a TLS ClientHello starts with
        reader.append(bytes)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == .keepalive)
        #expect(reader.takeUndecoded() == ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x00, 0x05]))
        #expect(reader.takeUndecoded() == nil)
    }

    @Test("the stream ending inside a frame is a truncated frame, counting the bytes of it received")
    func truncatedAtTheEnd() throws {
        var reader = Self.reader()
        var bytes = Self.encoded([.keepalive, .data(Fixtures.pattern(count: 300_000))])
        bytes.moveWriterIndex(to: bytes.writerIndex - 1000)
        let frames = try Self.decode(bytes, readLength: 65_536, into: &reader)
        #expect(frames == [.keepalive])
        let cut = bytes.readableBytes - Self.encoded([.keepalive]).readableBytes
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: cut)) { try reader.finish() }
    }

    @Test("a malformed frame throws and the bytes read are dropped")
    func malformedDropsTheBytes() throws {
        var reader = Self.reader()
        var bytes = ByteBuffer()
        bytes.writeInteger(UInt32(Fixtures.sessionLimit + 1))  // a length over the limit
        bytes.writeBytes([0x01, 0x02])
        reader.append(bytes)
        #expect(throws: ProtocolError.self) { try reader.next(allocator: ByteBufferAllocator()) }
        #expect(reader.takeUndecoded() == nil)
    }
}

extension ReceiveBufferTests {
    @Test("a frame cut by the end of a read is completed by copying its own bytes: the next read is not copied")
    func nextReadIsNotCopied() throws {
        var reader = Self.reader()
        let chunk = Frame.chunk(channel: 3, Fixtures.pattern(count: 60_000))
        let bytes = Self.encoded([chunk, chunk, chunk])
        var reads = bytes
        let first = reads.readSlice(length: 90_000)!  // ends inside the second frame
        // Each read in storage of its own that it fills, as the socket's reads at full speed.
        let second = ByteBuffer(buffer: reads.readSlice(length: reads.readableBytes)!)
        reader.append(first)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == chunk)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil)
        reader.append(second)
        let stitched = try #require(try reader.next(allocator: ByteBufferAllocator()))
        #expect(stitched == chunk)
        // The cut frame was copied alone, not with the 90,000 bytes of the read it started in.
        guard case .chunk(_, let stitchedPayload) = stitched else { return }
        #expect(stitchedPayload.storageCapacity < 90_000)
        let third = try #require(try reader.next(allocator: ByteBufferAllocator()))
        #expect(third == chunk)
        // The third frame's payload is still in the second read's memory.
        guard case .chunk(_, let payload) = third else { return }
        let inRead = second.withUnsafeReadableBytes { read in
            payload.withUnsafeReadableBytes { payload in
                payload.baseAddress! >= read.baseAddress! && payload.baseAddress! < read.baseAddress! + read.count
            }
        }
        #expect(inRead)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil)
        try reader.finish()
    }

    @Test("a read that fills little of its storage is copied, so that a chunk kept does not keep the rest")
    func poorlyFilledReadIsCompacted() throws {
        var reader = Self.reader()
        let chunk = Frame.chunk(channel: 3, Fixtures.pattern(count: 60_000))
        // One frame read into a 1 MiB buffer, as NIO's adaptive allocator hands them out.
        var read = ByteBufferAllocator().buffer(capacity: 1 << 20)
        var frame = Self.encoded([chunk])
        read.writeBuffer(&frame)
        reader.append(read)
        let decoded = try #require(try reader.next(allocator: ByteBufferAllocator()))
        #expect(decoded == chunk)
        guard case .chunk(_, let payload) = decoded else { return }
        #expect(payload.storageCapacity < 2 * 60_100)
    }
}
