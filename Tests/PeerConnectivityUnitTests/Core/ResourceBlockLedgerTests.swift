import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// `ResourceBlockLedger`: what a resource's receiver holds, where each chunk goes, and what END means.
@Suite("Resource block ledger")
struct ResourceBlockLedgerTests {
    /// 40 bytes in blocks of 16: two whole blocks and a last one of 8.
    private static let layout = ResourceLayout(size: 40, blockLength: 16)

    private static func digest(_ byte: UInt8) -> [UInt8] {
        [UInt8](repeating: byte, count: WireProtocol.blockDigestLength)
    }

    // MARK: - Held blocks

    @Test("blocks kept from an earlier attempt start held, with their digests, in order")
    func keptStartHeld() {
        let ledger = ResourceBlockLedger(layout: Self.layout, kept: [2: Self.digest(2), 0: Self.digest(0)])
        #expect(ledger.heldBlocks == [0, 2])
        #expect(ledger.heldDigests == [Self.digest(0), Self.digest(2)])
        #expect(ledger.heldBytes == 16 + 8)
        #expect(!ledger.isInsideBlock)
        #expect(ResourceBlockLedger(layout: Self.layout).heldBlocks == [])
        #expect(ResourceBlockLedger(layout: Self.layout).heldBytes == 0)
    }

    @Test("a kept block past the end of the resource is not held")
    func keptPastTheEnd() {
        let ledger = ResourceBlockLedger(layout: Self.layout, kept: [1: Self.digest(1), 3: Self.digest(3)])
        #expect(ledger.heldBlocks == [1])
        #expect(ledger.outcomeAtEnd == .missing([0, 2]))
    }

    @Test("a held block sent again is forgotten at its BLOCK; its new bytes replace it once checked")
    func sentAgainReplaces() {
        var ledger = ResourceBlockLedger(layout: Self.layout, kept: [1: Self.digest(1)])
        #expect(ledger.blockStarted(1, digest: Self.digest(0x11)) == 16)
        #expect(ledger.heldBlocks == [])
        #expect(ledger.isInsideBlock)
        #expect(ledger.chunkArrived(length: 16) == (16, true))
        #expect(ledger.blockHashed(Self.digest(0x11)) == .verified(index: 1))
        #expect(ledger.heldDigests == [Self.digest(0x11)])
    }

    @Test("a held block sent again that does not match is no longer held: its bytes on disk changed")
    func sentAgainMismatch() {
        var ledger = ResourceBlockLedger(layout: Self.layout, kept: [1: Self.digest(1), 2: Self.digest(2)])
        _ = ledger.blockStarted(1, digest: Self.digest(1))
        _ = ledger.chunkArrived(length: 16)
        #expect(ledger.blockHashed(Self.digest(0xEE)) == .mismatch(index: 1))
        #expect(ledger.heldBlocks == [2])
        #expect(!ledger.isInsideBlock)
    }

    // MARK: - Chunks

    @Test("chunks land one after another from the block's offset; the last completes it")
    func chunkOffsets() {
        var ledger = ResourceBlockLedger(layout: Self.layout)
        #expect(ledger.blockStarted(1, digest: Self.digest(1)) == 16)
        #expect(ledger.chunkArrived(length: 5) == (16, false))
        #expect(ledger.chunkArrived(length: 5) == (21, false))
        #expect(ledger.isInsideBlock)
        #expect(ledger.chunkArrived(length: 6) == (26, true))
        #expect(ledger.blockHashed(Self.digest(1)) == .verified(index: 1))
        #expect(!ledger.isInsideBlock)

        // The short last block is complete at its own length, not the block length.
        #expect(ledger.blockStarted(2, digest: Self.digest(2)) == 32)
        #expect(ledger.chunkArrived(length: 7) == (32, false))
        #expect(ledger.chunkArrived(length: 1) == (39, true))
        #expect(ledger.blockHashed(Self.digest(2)) == .verified(index: 2))

        // Blocks may come in any order: block 0 after the others.
        #expect(ledger.blockStarted(0, digest: Self.digest(0)) == 0)
        #expect(ledger.chunkArrived(length: 16) == (0, true))
        #expect(ledger.blockHashed(Self.digest(0)) == .verified(index: 0))
        #expect(ledger.heldBlocks == [0, 1, 2])
    }

    @Test("a block is held only when its hash is the digest its BLOCK announced")
    func verifiedOrMismatch() {
        var ledger = ResourceBlockLedger(layout: Self.layout)
        _ = ledger.blockStarted(0, digest: Self.digest(0))
        _ = ledger.chunkArrived(length: 16)
        #expect(ledger.blockHashed(Self.digest(0)) == .verified(index: 0))
        _ = ledger.blockStarted(1, digest: Self.digest(1))
        _ = ledger.chunkArrived(length: 16)
        var damaged = Self.digest(1)
        damaged[WireProtocol.blockDigestLength - 1] ^= 1
        #expect(ledger.blockHashed(damaged) == .mismatch(index: 1))
        #expect(ledger.heldBlocks == [0])
        #expect(ledger.heldBytes == 16)
        // Sent again, the block can still be held.
        _ = ledger.blockStarted(1, digest: Self.digest(1))
        _ = ledger.chunkArrived(length: 16)
        #expect(ledger.blockHashed(Self.digest(1)) == .verified(index: 1))
        #expect(ledger.heldBlocks == [0, 1])
    }

    // MARK: - END

    @Test("at END, every block held is whole, with the digests in order; otherwise the missing ones")
    func outcomeAtEnd() {
        var ledger = ResourceBlockLedger(layout: Self.layout, kept: [2: Self.digest(2)])
        #expect(ledger.outcomeAtEnd == .missing([0, 1]))
        _ = ledger.blockStarted(1, digest: Self.digest(1))
        _ = ledger.chunkArrived(length: 16)
        _ = ledger.blockHashed(Self.digest(1))
        #expect(ledger.outcomeAtEnd == .missing([0]))
        _ = ledger.blockStarted(0, digest: Self.digest(0))
        // Inside a block, the block is not held.
        #expect(ledger.outcomeAtEnd == .missing([0]))
        _ = ledger.chunkArrived(length: 16)
        _ = ledger.blockHashed(Self.digest(0))
        #expect(ledger.outcomeAtEnd == .whole(digests: [Self.digest(0), Self.digest(1), Self.digest(2)]))
    }

    @Test("an empty resource is whole at END with no digest")
    func emptyResource() {
        let ledger = ResourceBlockLedger(layout: ResourceLayout(size: 0))
        #expect(ledger.outcomeAtEnd == .whole(digests: []))
        #expect(ledger.heldBlocks == [])
    }

    @Test("the protocol's layout: a 1 MiB block in 64 KiB chunks, then a last block of one byte")
    func protocolBlocks() {
        let mebibyte = WireProtocol.resourceBlockLength
        var ledger = ResourceBlockLedger(layout: ResourceLayout(size: UInt64(mebibyte) + 1))
        #expect(ledger.blockStarted(1, digest: Self.digest(1)) == UInt64(mebibyte))
        #expect(ledger.chunkArrived(length: 1) == (UInt64(mebibyte), true))
        _ = ledger.blockHashed(Self.digest(1))
        #expect(ledger.blockStarted(0, digest: Self.digest(0)) == 0)
        for chunk in 0..<16 {
            let (offset, completes) = ledger.chunkArrived(length: 64 << 10)
            #expect(offset == UInt64(chunk) << 16)
            #expect(completes == (chunk == 15))
        }
        _ = ledger.blockHashed(Self.digest(0))
        #expect(ledger.outcomeAtEnd == .whole(digests: [Self.digest(0), Self.digest(1)]))
    }

    // MARK: - Random deliveries

    @Test("200 seeded transfers: blocks in random order, cut at random, some damaged, some kept, some sent twice")
    func randomDeliveries() throws {
        var outcomes = (verified: 0, mismatches: 0, whole: 0, missing: 0, replaced: 0)
        for seed in 0..<200 {
            var random = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 0x1ED6E5)
            let blockLength = Int.random(in: 1...48, using: &random)
            let size = UInt64.random(in: 0...UInt64(blockLength * 24), using: &random)
            let layout = ResourceLayout(size: size, blockLength: blockLength)
            let source = (0..<Int(size)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let truth = (0..<layout.blockCount).map { index in
                Self.testDigest(Self.slice(source, of: index, in: layout))
            }
            // What the receiver's file holds: the kept blocks are the sender's bytes, the rest is zero.
            var file = [UInt8](repeating: 0, count: Int(size))
            var model = Set<Int>()
            var kept: [Int: [UInt8]] = [:]
            for index in 0..<layout.blockCount where random.next() % 4 == 0 {
                let start = Int(layout.offset(of: index))
                file.replaceSubrange(
                    start..<start + layout.length(of: index),
                    with: Self.slice(source, of: index, in: layout)
                )
                kept[index] = truth[index]
                model.insert(index)
            }
            var ledger = ResourceBlockLedger(layout: layout, kept: kept)
            #expect(Set(ledger.heldBlocks) == model)

            // The sender sends most blocks not held, in random order, some held ones, some twice.
            var order = (0..<layout.blockCount).filter { !model.contains($0) && random.next() % 8 != 0 }
            order += model.sorted().filter { _ in random.next() % 3 == 0 }
            order += order.filter { _ in random.next() % 6 == 0 }
            order.shuffle(using: &random)

            for index in order {
                let wasHeld = model.contains(index)
                let damaged = random.next() % 5 == 0
                var bytes = Self.slice(source, of: index, in: layout)
                if damaged { bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= 0x5A }

                let started = ledger.blockStarted(index, digest: truth[index])
                let start = try #require(started)
                model.remove(index)
                #expect(start == UInt64(index) * UInt64(blockLength), "seed \(seed)")
                #expect(!ledger.heldBlocks.contains(index))

                var sent = 0
                while sent < bytes.count {
                    let length = Int.random(in: 1...(bytes.count - sent), using: &random)
                    let (offset, completes) = ledger.chunkArrived(length: length)
                    #expect(offset == start + UInt64(sent), "seed \(seed), block \(index)")
                    let at = Int(offset)
                    file.replaceSubrange(at..<at + length, with: bytes[sent..<sent + length])
                    sent += length
                    #expect(completes == (sent == bytes.count), "seed \(seed), block \(index)")
                }
                let written = Self.slice(file, of: index, in: layout)
                let verdict = ledger.blockHashed(Self.testDigest(written))
                if damaged {
                    #expect(verdict == .mismatch(index: index), "seed \(seed)")
                    outcomes.mismatches += 1
                } else {
                    #expect(verdict == .verified(index: index), "seed \(seed)")
                    model.insert(index)
                    outcomes.verified += 1
                    if wasHeld { outcomes.replaced += 1 }
                }
                #expect(ledger.heldBlocks == model.sorted(), "seed \(seed)")
                #expect(ledger.heldBytes == layout.bytes(in: model), "seed \(seed)")
            }

            // Every block held has the sender's bytes in the file, and the digest the sender announced.
            for index in model {
                #expect(Self.slice(file, of: index, in: layout) == Self.slice(source, of: index, in: layout))
            }
            #expect(ledger.heldDigests == model.sorted().map { truth[$0] })
            let missing = (0..<layout.blockCount).filter { !model.contains($0) }
            if missing.isEmpty {
                #expect(ledger.outcomeAtEnd == .whole(digests: truth), "seed \(seed)")
                #expect(file == source, "seed \(seed)")
                outcomes.whole += 1
            } else {
                #expect(ledger.outcomeAtEnd == .missing(missing), "seed \(seed)")
                outcomes.missing += 1
            }
        }
        // The seeds reach every case, so the loop tested something.
        #expect(outcomes.verified > 200)
        #expect(outcomes.mismatches > 50)
        #expect(outcomes.whole > 10)
        #expect(outcomes.missing > 10)
        #expect(outcomes.replaced > 10)
    }

    private static func slice(_ bytes: [UInt8], of index: Int, in layout: ResourceLayout) -> [UInt8] {
        let start = Int(layout.offset(of: index))
        return Array(bytes[start..<start + layout.length(of: index)])
    }

    /// A 32-byte stand-in for SHA-256 (the ledger only compares digests): four FNV-1a hashes with
    /// different offsets.
    private static func testDigest(_ bytes: [UInt8]) -> [UInt8] {
        var digest: [UInt8] = []
        for lane in 0..<UInt64(4) {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ (lane &* 0x9E37_79B9_7F4A_7C15)
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01B3
            }
            withUnsafeBytes(of: hash.bigEndian) { digest.append(contentsOf: $0) }
        }
        return digest
    }
}
