import NIOCore
import NIOPosix
import PeerConnectivityCore
import SystemPackage

/// Reads and hashes a resource's blocks ahead of the sender, on NIO's thread pool: up to
/// ``ResourceSender/readAhead`` blocks at once, handed out in order. The hashing runs on the pool's
/// threads (one per core), beside the event loop that writes the blocks before.
struct BlockReadAhead {
    private var remaining: ArraySlice<Int>
    private var pending: [(Int, Task<(ByteBuffer, [UInt8]), any Error>)] = []
    private let descriptor: SystemPackage.FileDescriptor
    private let layout: ResourceLayout
    private let allocator: ByteBufferAllocator
    private let statistics: ResourceChannel

    init(
        blocks: [Int],
        descriptor: SystemPackage.FileDescriptor,
        layout: ResourceLayout,
        allocator: ByteBufferAllocator,
        statistics: ResourceChannel
    ) {
        self.remaining = blocks[...]
        self.descriptor = descriptor
        self.layout = layout
        self.allocator = allocator
        self.statistics = statistics
    }

    /// The next block in order, its bytes and its SHA-256; `nil` after the last.
    ///
    /// - Throws: a read error (the file shrank, say), or `CancellationError`.
    mutating func next() async throws -> (index: Int, block: ByteBuffer, digest: [UInt8])? {
        try Task.checkCancellation()
        while pending.count < ResourceSender.readAhead, let index = remaining.popFirst() {
            let (descriptor, layout, allocator, statistics) = (
                self.descriptor, self.layout, self.allocator, self.statistics
            )
            let task = Task {
                try await NIOThreadPool.singleton.runIfActive {
                    let start = ContinuousClock.now
                    let block = try ResourceFileIO.read(
                        descriptor,
                        at: layout.offset(of: index),
                        length: layout.length(of: index),
                        allocator: allocator
                    )
                    let read = ContinuousClock.now
                    let digest = ResourceFileIO.digest(block)
                    let hashed = ContinuousClock.now
                    statistics.count {
                        $0.readSeconds += Self.seconds(read - start)
                        $0.hashSeconds += Self.seconds(hashed - read)
                    }
                    return (block, digest)
                }
            }
            pending.append((index, task))
        }
        guard !pending.isEmpty else { return nil }
        let (index, task) = pending.removeFirst()
        let (block, digest) = try await task.value
        return (index, block, digest)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Stops reading ahead, and waits for the reads under way, so that the file can be closed.
    mutating func stop() async {
        remaining = []
        for (_, task) in pending { _ = try? await task.value }
        pending = []
    }
}
