import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// `ResourceLayout`: how a resource is cut into blocks, the HAVE bitmap, and the bytes of the root.
@Suite("Resource layout")
struct ResourceLayoutTests {
    private static let mebibyte = WireProtocol.resourceBlockLength

    // MARK: - Blocks

    @Test("an empty resource has no block")
    func empty() {
        let layout = ResourceLayout(size: 0)
        #expect(layout.blockCount == 0)
        #expect(layout.blockLength == Self.mebibyte)
        #expect(layout.fitsProtocol)
        #expect(layout.bytes(in: []) == 0)
    }

    @Test("one byte is one block of one byte")
    func oneByte() {
        let layout = ResourceLayout(size: 1)
        #expect(layout.blockCount == 1)
        #expect(layout.offset(of: 0) == 0)
        #expect(layout.length(of: 0) == 1)
        #expect(layout.bytes(in: [0]) == 1)
    }

    @Test("exactly 1 MiB is one whole block; one byte more starts a second of one byte")
    func blockBoundary() {
        let exact = ResourceLayout(size: UInt64(Self.mebibyte))
        #expect(exact.blockCount == 1)
        #expect(exact.length(of: 0) == Self.mebibyte)

        let over = ResourceLayout(size: UInt64(Self.mebibyte) + 1)
        #expect(over.blockCount == 2)
        #expect(over.offset(of: 0) == 0)
        #expect(over.length(of: 0) == Self.mebibyte)
        #expect(over.offset(of: 1) == UInt64(Self.mebibyte))
        #expect(over.length(of: 1) == 1)
        #expect(over.bytes(in: [0, 1]) == over.size)
        #expect(over.bytes(in: [1]) == 1)

        let under = ResourceLayout(size: UInt64(Self.mebibyte) - 1)
        #expect(under.blockCount == 1)
        #expect(under.length(of: 0) == Self.mebibyte - 1)
    }

    @Test("UInt64.max bytes: 2^44 blocks, the last 1 MiB - 1, without overflow; too many for the protocol")
    func largestSize() {
        let layout = ResourceLayout(size: .max)
        #expect(layout.blockCount == 1 << 44)
        #expect(!layout.fitsProtocol)
        let last = layout.blockCount - 1
        #expect(layout.offset(of: last) == UInt64.max - UInt64(Self.mebibyte) + 1)
        #expect(layout.length(of: last) == Self.mebibyte - 1)
        #expect(layout.offset(of: last) + UInt64(layout.length(of: last)) == UInt64.max)
        #expect(layout.length(of: 0) == Self.mebibyte)
    }

    @Test("the protocol carries at most 512 Ki blocks: 512 GiB fits, one byte more does not")
    func protocolLimit() {
        let largest = UInt64(WireProtocol.maximumResourceBlocks) * UInt64(Self.mebibyte)
        #expect(largest == 512 << 30)
        let fits = ResourceLayout(size: largest)
        #expect(fits.blockCount == WireProtocol.maximumResourceBlocks)
        #expect(fits.fitsProtocol)
        let over = ResourceLayout(size: largest + 1)
        #expect(over.blockCount == WireProtocol.maximumResourceBlocks + 1)
        #expect(!over.fitsProtocol)
    }

    @Test("every block but the last is whole, and the blocks tile the resource", arguments: 0...40)
    func tiling(size: Int) {
        let layout = ResourceLayout(size: UInt64(size), blockLength: 8)
        #expect(layout.blockCount == (size + 7) / 8)
        var next: UInt64 = 0
        for index in 0..<layout.blockCount {
            #expect(layout.offset(of: index) == next)
            let length = layout.length(of: index)
            #expect(length >= 1)
            #expect(index == layout.blockCount - 1 || length == 8)
            next += UInt64(length)
        }
        #expect(next == UInt64(size))
        #expect(layout.bytes(in: 0..<layout.blockCount) == UInt64(size))
    }

    // MARK: - HAVE bitmap

    @Test("bits go least significant first: block 0 is 0x01, block 7 is 0x80, block 8 starts the next byte")
    func bitOrder() {
        let layout = ResourceLayout(size: 20, blockLength: 1)
        #expect(layout.bitmap(of: [0]) == [0x01, 0, 0])
        #expect(layout.bitmap(of: [7]) == [0x80, 0, 0])
        #expect(layout.bitmap(of: [8]) == [0, 0x01, 0])
        #expect(layout.bitmap(of: [0, 2, 19]) == [0b101, 0, 0b1000])
        #expect(layout.blocks(inBitmap: [0b101, 0, 0b1000]) == [0, 2, 19])
    }

    @Test("no block held is an empty bitmap, and an empty bitmap holds none")
    func emptyBitmap() {
        let layout = ResourceLayout(size: 100, blockLength: 10)
        #expect(layout.bitmap(of: []) == [])
        #expect(layout.blocks(inBitmap: []) == [])
        // A bitmap of the right length with no bit set says the same.
        #expect(layout.blocks(inBitmap: [0, 0]) == [])
        #expect(ResourceLayout(size: 0).bitmap(of: []) == [])
        #expect(ResourceLayout(size: 0).blocks(inBitmap: []) == [])
    }

    @Test("500 seeded random sets of blocks cross the bitmap and come back, in order")
    func bitmapRoundTrip() {
        var random = SplitMix64(seed: 0xB17_3A9)
        for _ in 0..<500 {
            let blockLength = Int.random(in: 1...64, using: &random)
            let size = UInt64.random(in: 1...UInt64(blockLength * 300), using: &random)
            let layout = ResourceLayout(size: size, blockLength: blockLength)
            let density = Double.random(in: 0...1, using: &random)
            let held = (0..<layout.blockCount).filter { _ in Double.random(in: 0..<1, using: &random) < density }
            let bitmap = layout.bitmap(of: held.shuffled(using: &random))
            if held.isEmpty {
                #expect(bitmap.isEmpty)
            } else {
                #expect(bitmap.count == (layout.blockCount + 7) / 8)
                #expect(bitmap.reduce(0) { $0 + $1.nonzeroBitCount } == held.count)
            }
            #expect(layout.blocks(inBitmap: bitmap) == held, "size \(size), block length \(blockLength)")
        }
    }

    @Test("a bitmap one byte too short or too long fits no resource", arguments: [1, 7, 8, 9, 16, 17, 100])
    func bitmapWrongLength(blockCount: Int) {
        let layout = ResourceLayout(size: UInt64(blockCount), blockLength: 1)
        let length = (blockCount + 7) / 8
        #expect(layout.blocks(inBitmap: [UInt8](repeating: 0x01, count: length)) != nil)
        #expect(layout.blocks(inBitmap: [UInt8](repeating: 0x01, count: length + 1)) == nil)
        if length > 1 {
            #expect(layout.blocks(inBitmap: [UInt8](repeating: 0x01, count: length - 1)) == nil)
        }
        // A bitmap for a resource with no block must be empty.
        #expect(ResourceLayout(size: 0).blocks(inBitmap: [0]) == nil)
    }

    @Test("a bit past the last block makes the bitmap unfit, whichever bit it is")
    func bitPastTheEnd() {
        for blockCount in 1...24 where blockCount % 8 != 0 {
            let layout = ResourceLayout(size: UInt64(blockCount), blockLength: 1)
            let last = layout.bitmap(of: [blockCount - 1])
            #expect(layout.blocks(inBitmap: last) == [blockCount - 1])
            for extra in blockCount..<((blockCount + 7) / 8 * 8) {
                var bitmap = last
                bitmap[extra / 8] |= 1 << UInt8(extra % 8)
                #expect(layout.blocks(inBitmap: bitmap) == nil, "\(blockCount) blocks, bit \(extra)")
            }
        }
    }

    @Test("the largest resource's bitmap is 64 KiB, what a HAVE frame may carry")
    func largestBitmap() {
        let layout = ResourceLayout(size: UInt64(WireProtocol.maximumResourceBlocks) * UInt64(Self.mebibyte))
        let all = layout.bitmap(of: 0..<layout.blockCount)
        #expect(all.count == 64 << 10)
        #expect(all.allSatisfy { $0 == 0xFF })
        #expect(layout.blocks(inBitmap: all)?.count == WireProtocol.maximumResourceBlocks)
    }

    // MARK: - Root

    @Test("the root's input is the size (8 bytes, big endian), the block length (4) and the digests in order")
    func rootInput() {
        let digests: [[UInt8]] = (0..<3).map {
            [UInt8](repeating: UInt8(0xA0 + $0), count: WireProtocol.blockDigestLength)
        }
        let small = ResourceLayout(size: 40, blockLength: 16)
        #expect(small.blockCount == 3)
        let input = small.rootInput(digests: digests)
        #expect(input.count == 12 + 3 * 8)
        #expect(Array(input[0..<8]) == [0, 0, 0, 0, 0, 0, 0, 40])
        #expect(Array(input[8..<12]) == [0, 0, 0, 16])
        #expect(Array(input[12...]) == digests[0] + digests[1] + digests[2])

        // Byte order: the most significant byte first, in both numbers.
        let wide = ResourceLayout(size: 0x01_0203_0405, blockLength: 0xF0F1_F2F3)
        #expect(wide.blockCount == 2)
        let wideInput = wide.rootInput(digests: [digests[2], digests[0]])
        #expect(Array(wideInput[0..<12]) == [0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0xF0, 0xF1, 0xF2, 0xF3])
        #expect(Array(wideInput[12...]) == digests[2] + digests[0])
    }

    @Test("the root's input for the protocol's blocks, and for an empty resource")
    func rootInputProtocolBlocks() {
        let over = ResourceLayout(size: UInt64(Self.mebibyte) + 1)
        let digests = [[UInt8](repeating: 1, count: 8), [UInt8](repeating: 2, count: 8)]
        #expect(
            over.rootInput(digests: digests) == [0, 0, 0, 0, 0, 0x10, 0, 0x01, 0, 0x10, 0, 0] + digests[0] + digests[1]
        )
        // No blocks: only the size and the block length, so an empty file still has a root.
        #expect(ResourceLayout(size: 0).rootInput(digests: []) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0])
    }
}
