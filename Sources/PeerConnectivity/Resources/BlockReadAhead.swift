import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Reads and hashes a resource's blocks ahead of the sender, on the ``FileExecutor``: up to
/// ``ResourceSender/readAhead`` blocks at once, handed out in order. The hashing runs on its threads
/// (about one per core), beside the event loop that writes the blocks before.
struct BlockReadAhead {
    private var remaining: ArraySlice<Int>
    private var pending: [(Int, Task<([ByteBuffer], [UInt8]), any Error>)] = []
    private let source: any ResourceSource
    private let layout: ResourceLayout
    private let allocator: ByteBufferAllocator
    private let digestKind: BlockDigestKind
    private let statistics: ResourceSendRecord
    /// The channel whose CHUNK frames the blocks are read into; `nil` to read them only to hash them.
    private let channel: UInt32?
    private let makeBuffer: @Sendable (Int) -> ByteBuffer

    init(
        blocks: [Int],
        source: any ResourceSource,
        layout: ResourceLayout,
        allocator: ByteBufferAllocator,
        digestKind: BlockDigestKind,
        statistics: ResourceSendRecord,
        framesFor channel: UInt32? = nil,
        makeBuffer: @escaping @Sendable (Int) -> ByteBuffer = { ByteBufferAllocator().buffer(capacity: $0) }
    ) {
        self.channel = channel
        self.makeBuffer = makeBuffer
        self.remaining = blocks[...]
        self.source = source
        self.layout = layout
        self.allocator = allocator
        self.digestKind = digestKind
        self.statistics = statistics
    }

    /// The next block in order, its bytes and its digest (``BlockHasher``); `nil` after the last.
    ///
    /// - Throws: a read error (the file shrank, say), or `CancellationError`.
    mutating func next() async throws -> (index: Int, frames: [ByteBuffer], digest: [UInt8])? {
        try Task.checkCancellation()
        while pending.count < ResourceSender.readAhead, let index = remaining.popFirst() {
            let (source, layout, allocator, statistics, channel, makeBuffer, digestKind) = (
                self.source, self.layout, self.allocator, self.statistics, self.channel, self.makeBuffer,
                self.digestKind
            )
            let task = Task { () async throws -> ([ByteBuffer], [UInt8]) in
                try await FileExecutor.run {
                    guard let channel else {
                        let start = ContinuousClock.now
                        var block = allocator.buffer(capacity: layout.length(of: index))
                        try source.read(at: layout.offset(of: index), length: layout.length(of: index), into: &block)
                        let read = ContinuousClock.now
                        let digest = ResourceFileIO.blockDigest(block, digestKind)
                        statistics.count {
                            $0.readSeconds += (read - start).inSeconds
                            $0.hashSeconds += (ContinuousClock.now - read).inSeconds
                        }
                        return ([ByteBuffer](), digest)
                    }
                    return try Self.readFrames(
                        of: index,
                        layout: layout,
                        source: source,
                        channel: channel,
                        makeBuffer: makeBuffer,
                        digestKind: digestKind,
                        statistics: statistics
                    )
                }
            }
            pending.append((index, task))
        }
        guard !pending.isEmpty else { return nil }
        let (index, task) = pending.removeFirst()
        let (frames, digest) = try await task.value
        return (index, frames, digest)
    }

    /// Reads block `index` straight into CHUNK frames of `channel` and hashes each payload as it lands,
    /// while it is in this thread's cache: the bytes are copied once, from the page cache to the frame.
    private static func readFrames(
        of index: Int,
        layout: ResourceLayout,
        source: any ResourceSource,
        channel: UInt32,
        makeBuffer: (Int) -> ByteBuffer,
        digestKind: BlockDigestKind,
        statistics: ResourceSendRecord
    ) throws -> ([ByteBuffer], [UInt8]) {
        var hasher = BlockHasher(digestKind)
        var frames: [ByteBuffer] = []
        var reading = Duration.zero
        var hashing = Duration.zero
        let length = layout.length(of: index)
        var done = 0
        while done < length {
            let payload = min(FrameEncoder.chunkPayloadLength, length - done)
            var frame = makeBuffer(FrameEncoder.chunkHeaderLength + payload)
            FrameEncoder.writeChunkHeader(channel: channel, payloadLength: payload, into: &frame)
            let start = ContinuousClock.now
            try source.read(at: layout.offset(of: index) + UInt64(done), length: payload, into: &frame)
            let read = ContinuousClock.now
            frame.withUnsafeReadableBytes { bytes in
                hasher.update(UnsafeRawBufferPointer(rebasing: bytes[FrameEncoder.chunkHeaderLength...]))
            }
            hashing += ContinuousClock.now - read
            reading += read - start
            frames.append(frame)
            done += payload
        }
        statistics.count {
            $0.readSeconds += reading.inSeconds
            $0.hashSeconds += hashing.inSeconds
        }
        return (frames, hasher.finalize())
    }

    /// Stops reading ahead, and waits for the reads under way, so that the source can be closed.
    mutating func stop() async {
        remaining = []
        for (_, task) in pending { _ = try? await task.value }
        pending = []
    }
}
