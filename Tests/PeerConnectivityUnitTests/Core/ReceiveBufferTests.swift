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
    @Test("a CHUNK cut by the end of a read comes out in two pieces, each in its own read's memory")
    func cutChunkComesOutInPieces() throws {
        var reader = Self.reader()
        let payload = Fixtures.pattern(count: 60_000)
        let chunk = Frame.chunk(channel: 3, payload)
        let bytes = Self.encoded([chunk, chunk, chunk])
        var reads = bytes
        // Each read in storage of its own that it fills, as the socket's reads at full speed.
        let first = ByteBuffer(buffer: reads.readSlice(length: 90_000)!)  // ends inside the second frame
        let second = ByteBuffer(buffer: reads.readSlice(length: reads.readableBytes)!)
        reader.append(first)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == chunk)
        // The second frame's payload in the first read: 90,000 - 60,009 bytes of the first frame - 9 of its header.
        let head = try #require(try reader.next(allocator: ByteBufferAllocator()))
        #expect(head == .chunk(channel: 3, payload.getSlice(at: 0, length: 29_982)!))
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil)
        reader.append(second)
        let tail = try #require(try reader.next(allocator: ByteBufferAllocator()))
        #expect(tail == .chunk(channel: 3, payload.getSlice(at: 29_982, length: 60_000 - 29_982)!))
        #expect(try reader.next(allocator: ByteBufferAllocator()) == chunk)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil)
        try reader.finish()
        // No byte was copied: each piece is in the memory of the read it came in.
        for (frame, read) in [(head, first), (tail, second)] {
            guard case .chunk(_, let piece) = frame else { continue }
            let inRead = read.withUnsafeReadableBytes { read in
                piece.withUnsafeReadableBytes { piece in
                    piece.baseAddress! >= read.baseAddress!
                        && piece.baseAddress! + piece.count <= read.baseAddress! + read.count
                }
            }
            #expect(inRead)
        }
    }

    @Test(
        "CHUNKs cut anywhere come out as pieces of their channel, none empty, adding up to each CHUNK in order",
        arguments: [1, 7, 9, 10, 4096, 65_536, 90_000]
    )
    func cutChunksAddUp(readLength: Int) throws {
        var reader = Self.reader()
        let frames: [Frame] = [
            .chunk(channel: 3, Fixtures.pattern(count: 60_000, seed: 1)),
            .data(Fixtures.pattern(count: 5000)),
            .chunk(channel: 5, Fixtures.pattern(count: 1, seed: 2)),
            .chunk(channel: 3, Fixtures.pattern(count: WireProtocol.maximumChunkLength, seed: 3)),
            .keepalive,
        ]
        let decoded = try Self.decode(Self.encoded(frames), readLength: readLength, into: &reader)
        var pieces = decoded.makeIterator()
        for expected in frames {
            guard case .chunk(let channel, let payload) = expected else {
                #expect(pieces.next() == expected)
                continue
            }
            var gathered = ByteBuffer()
            while gathered.readableBytes < payload.readableBytes, let piece = pieces.next() {
                guard case .chunk(channel, var bytes) = piece, bytes.readableBytes > 0 else {
                    Issue.record("a piece of channel \(channel) expected, got \(piece)")
                    return
                }
                gathered.writeBuffer(&bytes)
            }
            #expect(gathered == payload)
        }
        #expect(pieces.next() == nil)
        // Reads shorter than a CHUNK cut some: those came out in more than one piece.
        if readLength < 60_000 { #expect(decoded.count > frames.count) }
        try reader.finish()
    }

    @Test("the stream ending inside a CHUNK that came out in part is a truncated frame of all its bytes received")
    func truncatedInsideCutChunk() throws {
        var reader = Self.reader()
        var bytes = Self.encoded([.chunk(channel: 3, Fixtures.pattern(count: 60_000))])
        bytes.moveWriterIndex(to: 40_000)
        #expect(try Self.decode(bytes, readLength: 25_000, into: &reader).count == 2)
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: 40_000)) { try reader.finish() }
    }

    @Test("a cut CHUNK the parser will refuse (channel 0) is not handed out in pieces: it is refused whole")
    func refusedChunkIsNotCut() throws {
        var reader = Self.reader()
        let bytes = Self.encoded([.chunk(channel: 0, Fixtures.pattern(count: 1000))])
        #expect(throws: ProtocolError.self) { try Self.decode(bytes, readLength: 500, into: &reader) }
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

    /// Appends one read of `bytes` into a 1 MiB buffer, as NIO's adaptive allocator hands them out, and
    /// whether the first frame decoded from it lies in that buffer (a slice of the read, not a copy).
    private static func firstFrame(of bytes: ByteBuffer) throws -> (frame: Frame, inTheRead: Bool) {
        var reader = Self.reader()
        return try #require(try frames(of: bytes, into: &reader).first)
    }

    /// Appends one read of `bytes` to `reader` in a 1 MiB buffer, and the frames decoded then, each with
    /// whether its payload lies in that buffer. The read is kept alive meanwhile, so that no copy can be given
    /// its memory.
    private static func frames(of bytes: ByteBuffer, into reader: inout ReceiveBuffer) throws
        -> [(frame: Frame, inTheRead: Bool)]
    {
        var read = ByteBufferAllocator().buffer(capacity: 1 << 20)
        var bytes = bytes
        read.writeBuffer(&bytes)
        return try withExtendedLifetime(read) {
            reader.append(read)
            var frames: [(frame: Frame, inTheRead: Bool)] = []
            while let frame = try reader.next(allocator: ByteBufferAllocator()) {
                let inTheRead = read.withVeryUnsafeBytes { storage in
                    switch frame {
                    case .data(let payload), .chunk(_, let payload):
                        let start = payload.withUnsafeReadableBytes { $0.baseAddress! }
                        return start >= storage.baseAddress! && start < storage.baseAddress! + storage.count
                    default:
                        return false
                    }
                }
                frames.append((frame, inTheRead))
            }
            return frames
        }
    }

    @Test("a read of whole messages, none kept as a slice, is decoded where it was read: no copy")
    func readOfSmallMessagesIsNotCopied() throws {
        let frames: [Frame] = [
            .data(Fixtures.pattern(count: 64)), .keepalive,
            .data(Fixtures.pattern(count: ReceiveBuffer.copiedMessageLimit)),
        ]
        let (first, inTheRead) = try Self.firstFrame(of: Self.encoded(frames))
        #expect(first == frames[0])
        #expect(inTheRead)
    }

    @Test("a poorly filled read with a CHUNK among its messages is copied: a stream keeps the chunk")
    func readWithAChunkIsCopied() throws {
        let frames = [Frame.data(Fixtures.pattern(count: 64)), .chunk(channel: 3, Fixtures.pattern(count: 100))]
        let (first, inTheRead) = try Self.firstFrame(of: Self.encoded(frames))
        #expect(first == frames[0])
        #expect(!inTheRead)
    }

    @Test("every DATA payload that can be a slice of a read is one its receiver copies out")
    func slicedMessagesAreCopied() {
        // A body from the gather threshold on is gathered into a buffer of its own; below it, the read's
        // slice is copied into `Data` up to the copied limit.
        #expect(ReceiveBuffer.copiedMessageLimit >= FrameDecoder.defaultGatherThreshold)
    }

    @Test("a poorly filled read that ends inside a frame is copied, the cut frame's start with it")
    func readEndingInsideAFrameIsCopied() throws {
        var bytes = Self.encoded([.data(Fixtures.pattern(count: 64)), .data(Fixtures.pattern(count: 64))])
        bytes.moveWriterIndex(to: bytes.writerIndex - 10)
        let (first, inTheRead) = try Self.firstFrame(of: bytes)
        #expect(first == .data(Fixtures.pattern(count: 64)))
        #expect(!inTheRead)
    }

    @Test("a poorly filled read that finishes a large body being gathered is decoded where it was read")
    func readFinishingAGatheredBodyIsNotCopied() throws {
        let large = Frame.data(Fixtures.pattern(count: 200_000))
        let small = Frame.data(Fixtures.pattern(count: 64))
        var bytes = Self.encoded([large, small])
        var reader = Self.reader()
        reader.append(bytes.readSlice(length: 100_000)!)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil, "the body is being gathered")
        // The body's end and a small message, in storage the read fills poorly, as a socket's read can be.
        let decoded = try Self.frames(of: bytes, into: &reader)
        #expect(decoded.map(\.frame) == [large, small])
        #expect(
            decoded.last?.inTheRead == true,
            "the read was copied although only the gathered body's end preceded the message"
        )
    }

    @Test("the bytes that finish a gathered body are skipped when judging a read; what follows them is judged")
    func gatheredBytesAreSkipped() {
        var bytes = ByteBuffer(repeating: 0xAB, count: 1000)  // as frames: a length no read holds
        #expect(!ReceiveBuffer.leavesNoSlice(bytes))
        #expect(ReceiveBuffer.leavesNoSlice(bytes, gatheredFirst: 1000), "all of it goes into the body")
        #expect(!ReceiveBuffer.leavesNoSlice(bytes, gatheredFirst: 999), "one byte is no frame")
        var withMessage = bytes
        FrameEncoder.encode(.data(Fixtures.pattern(count: 64)), into: &withMessage)
        #expect(ReceiveBuffer.leavesNoSlice(withMessage, gatheredFirst: 1000))
        FrameEncoder.encode(.chunk(channel: 3, Fixtures.pattern(count: 100)), into: &bytes)
        #expect(!ReceiveBuffer.leavesNoSlice(bytes, gatheredFirst: 1000), "a stream keeps the chunk")
    }

    @Test("bytes appended by copy (TLS's plaintext buffer) leave the owner's buffer its own to write into again")
    func copiedReadIsNotTheOwners() throws {
        var reader = Self.reader()
        let chunk = Frame.chunk(channel: 3, Fixtures.pattern(count: 60_000))
        let message = Frame.data(Fixtures.pattern(count: 500))
        // Filled past half, as a busy TLS connection's buffer often is: no compaction copies it.
        var owners = ByteBufferAllocator().buffer(capacity: 64 << 10)
        var frames = Self.encoded([message, chunk])
        owners.writeBuffer(&frames)
        let storage = owners.withVeryUnsafeBytes { $0.baseAddress! }
        reader.append(copying: owners)
        let first = try #require(try reader.next(allocator: ByteBufferAllocator()))
        let second = try #require(try reader.next(allocator: ByteBufferAllocator()))
        // The owner reuses its buffer for its next read, as TLS does, while the frames are still held: it
        // writes where it wrote before, with no copy on write, because nothing taken from it shares it.
        owners.moveReaderIndex(to: 0)
        owners.moveWriterIndex(to: 0)
        owners.writeRepeatingByte(0xEE, count: 1000)
        #expect(owners.withVeryUnsafeBytes { $0.baseAddress! } == storage)
        #expect(first == message)
        #expect(second == chunk)
        #expect(try reader.next(allocator: ByteBufferAllocator()) == nil)
    }
}
