/// How a resource of a given length is cut into blocks, and how a set of blocks is written in a HAVE
/// frame's bitmap.
///
/// Every block is ``WireProtocol/resourceBlockLength`` bytes but the last, which holds the rest; an
/// empty resource has no block. The root digest in END is SHA-256 over the length (8 bytes, big
/// endian), the block length (4 bytes) and the blocks' digests (``BlockHasher``) in order (see docs/PROTOCOL.md).
package struct ResourceLayout: Sendable, Hashable {
    /// The resource's length in bytes.
    package let size: UInt64
    /// The length of every block but the last.
    package let blockLength: Int
    /// How many blocks the resource has.
    package let blockCount: Int

    /// The layout of a resource of `size` bytes.
    ///
    /// - Parameters:
    ///   - size: the resource's length.
    ///   - blockLength: the block length; the protocol's unless a test asks for smaller blocks.
    package init(size: UInt64, blockLength: Int = WireProtocol.resourceBlockLength) {
        precondition(blockLength > 0, "a block has at least one byte")
        self.size = size
        self.blockLength = blockLength
        let length = UInt64(blockLength)
        self.blockCount = Int(size / length + (size % length == 0 ? 0 : 1))
    }

    /// Whether the protocol can carry the resource: at most ``WireProtocol/maximumResourceBlocks`` blocks.
    package var fitsProtocol: Bool { blockCount <= WireProtocol.maximumResourceBlocks }

    /// Where block `index` starts in the file.
    ///
    /// - Parameter index: a block, below ``blockCount``.
    /// - Returns: its offset.
    package func offset(of index: Int) -> UInt64 {
        UInt64(index) * UInt64(blockLength)
    }

    /// The block that holds byte `offset`.
    ///
    /// - Parameter offset: a byte of the resource.
    /// - Returns: its block's index.
    package func blockIndex(containing offset: UInt64) -> Int {
        Int(offset / UInt64(blockLength))
    }

    /// How long block `index` is.
    ///
    /// - Parameter index: a block, below ``blockCount``.
    /// - Returns: its length in bytes.
    package func length(of index: Int) -> Int {
        Int(min(UInt64(blockLength), size - offset(of: index)))
    }

    /// The bytes the blocks in `blocks` hold together.
    ///
    /// - Parameter blocks: block indices, each below ``blockCount``.
    /// - Returns: the sum of their lengths.
    package func bytes(in blocks: some Sequence<Int>) -> UInt64 {
        blocks.reduce(0) { $0 + UInt64(length(of: $1)) }
    }

    /// The bitmap of a HAVE frame that holds `blocks`: empty when there are none.
    ///
    /// - Parameter blocks: block indices, each below ``blockCount``.
    /// - Returns: `(blockCount + 7) / 8` bytes, or none.
    package func bitmap(of blocks: some Sequence<Int>) -> [UInt8] {
        var bitmap = [UInt8](repeating: 0, count: (blockCount + 7) / 8)
        var any = false
        for index in blocks {
            bitmap[index / 8] |= 1 << UInt8(index % 8)
            any = true
        }
        return any ? bitmap : []
    }

    /// The blocks a HAVE frame's bitmap holds, in order; `nil` when the bitmap does not fit this
    /// resource (the wrong length, or a bit past the last block).
    ///
    /// - Parameter bitmap: the bitmap as received.
    /// - Returns: the block indices.
    package func blocks(inBitmap bitmap: [UInt8]) -> [Int]? {
        if bitmap.isEmpty { return [] }
        guard bitmap.count == (blockCount + 7) / 8 else { return nil }
        var blocks: [Int] = []
        for (byteIndex, byte) in bitmap.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                let index = byteIndex * 8 + bit
                guard index < blockCount else { return nil }
                blocks.append(index)
            }
        }
        return blocks
    }

    /// The bytes the root digest is computed over: the length, the block length, then the blocks'
    /// digests in order.
    ///
    /// - Parameter digests: each block's digest (``BlockHasher``), ``blockCount`` of them.
    /// - Returns: what to hash.
    package func rootInput(digests: [[UInt8]]) -> [UInt8] {
        precondition(digests.count == blockCount, "one digest per block")
        var input: [UInt8] = []
        input.reserveCapacity(12 + digests.count * WireProtocol.blockDigestLength)
        withUnsafeBytes(of: size.bigEndian) { input.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(blockLength).bigEndian) { input.append(contentsOf: $0) }
        for digest in digests { input.append(contentsOf: digest) }
        return input
    }
}
