import NIOCore
import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// `FrameParser` on malformed BLOCK (0x26) and HAVE (0x27) bodies.
@Suite("Frame decoder: malformed BLOCK and HAVE")
struct FrameDecoderResourceFrameTests {
    private typealias F = Fixtures

    private static let block = FrameType.block.rawValue
    private static let have = FrameType.have.rawValue

    private static func be32(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    private static func digest(_ byte: UInt8 = 0xD1) -> [UInt8] {
        [UInt8](repeating: byte, count: WireProtocol.digestLength)
    }

    private static func blockDigest(_ byte: UInt8 = 0xB1) -> [UInt8] {
        [UInt8](repeating: byte, count: WireProtocol.blockDigestLength)
    }

    // MARK: - Both

    @Test(
        "BLOCK and HAVE shorter than their channel, or on channel 0, are malformed",
        arguments: [FrameType.block, .have]
    )
    func channel(type: FrameType) {
        for count in 0...3 {
            #expect(throws: ProtocolError.malformed(type, "missing the 4-byte channel number")) {
                try F.parse(F.rawFrame(type: type.rawValue, payload: [UInt8](repeating: 1, count: count)))
            }
        }
        let body = type == .block ? Self.be32(0) + Self.blockDigest() : Self.digest()
        #expect(throws: ProtocolError.malformed(type, "channel 0 is not a channel")) {
            try F.parse(F.rawFrame(type: type.rawValue, payload: Self.be32(0) + body))
        }
    }

    // MARK: - BLOCK

    @Test(
        "a BLOCK body other than a 4-byte index and an 8-byte digest is malformed",
        arguments: [0, 1, 3, 4, 5, 11, 13, 36, 68, 1000]
    )
    func blockLength(count: Int) {
        let payload = Self.be32(1) + [UInt8](repeating: 0, count: count)
        #expect(
            throws: ProtocolError.malformed(.block, "expected a 4-byte index and an 8-byte digest after the channel")
        ) {
            try F.parse(F.rawFrame(type: Self.block, payload: payload))
        }
    }

    @Test(
        "a BLOCK index at or past the protocol's most blocks is malformed",
        arguments: [UInt32(WireProtocol.maximumResourceBlocks), UInt32(WireProtocol.maximumResourceBlocks) + 1, .max]
    )
    func blockIndexTooLarge(index: UInt32) {
        let payload = Self.be32(1) + Self.be32(index) + Self.blockDigest()
        let words = "block \(index); a resource has at most \(WireProtocol.maximumResourceBlocks)"
        #expect(throws: ProtocolError.malformed(.block, words)) {
            try F.parse(F.rawFrame(type: Self.block, payload: payload))
        }
    }

    @Test("BLOCK reads its channel, index and digest in order, up to the last index the protocol allows")
    func blockFields() throws {
        let digest = (0..<UInt8(WireProtocol.blockDigestLength)).map { $0 &* 7 }
        for index in [UInt32(0), 1, 0x0102, UInt32(WireProtocol.maximumResourceBlocks - 1)] {
            let bytes = F.rawFrame(type: Self.block, payload: Self.be32(0x0A0B_0C0D) + Self.be32(index) + digest)
            #expect(bytes.count == 4 + 1 + 4 + 4 + 8)
            #expect(try F.parse(bytes) == .block(channel: 0x0A0B_0C0D, index: index, digest: digest))
            #expect(
                Array(
                    FrameEncoder.buffer(for: .block(channel: 0x0A0B_0C0D, index: index, digest: digest))
                        .readableBytesView
                ) == bytes
            )
        }
    }

    @Test("the resource example of docs/PROTOCOL.md: the frames and the root's input, byte for byte")
    func protocolExample() throws {
        // XXH64("hello"), and the root (SHA-256) over it, as the document shows them.
        let block = Self.hex("26c7827d889f6da3")
        let root = Self.hex("d9daf0b1fb76dbb118514fc6164490923cf6f9ff68127454b38545626a17126b")
        #expect(Array("hello".utf8).withUnsafeBytes { BlockHasher.digest($0, .xxh64) } == block)
        let frames: [(Frame, [UInt8])] = [
            (
                .open(Frame.Open(channel: 1, kind: .resource, size: 5, name: Array("a.txt".utf8))),
                Self.hex("00000013 20 00000001 02 0000000000000005 612e747874")
            ),
            (.have(channel: 1, .nothing), Self.hex("00000025 27 00000001") + [UInt8](repeating: 0, count: 32)),
            (.credit(channel: 1, increment: 3_932_160), Self.hex("00000009 24 00000001 003c0000")),
            (.block(channel: 1, index: 0, digest: block), Self.hex("00000011 26 00000001 00000000") + block),
            (.chunk(channel: 1, F.buffer("hello")), Self.hex("0000000a 21 00000001 68656c6c6f")),
            (.end(channel: 1, digest: root), Self.hex("00000025 22 00000001") + root),
            (.done(channel: 1), Self.hex("00000005 25 00000001")),
        ]
        for (frame, bytes) in frames {
            #expect(Array(FrameEncoder.buffer(for: frame).readableBytesView) == bytes, "\(frame.type)")
            #expect(try F.parse(bytes) == frame)
        }
        #expect(
            ResourceLayout(size: 5).rootInput(digests: [block])
                == Self.hex("0000000000000005 00100000") + block
        )
        // Blocks 0 and 2 of 4 held: one bitmap byte.
        let layout = ResourceLayout(size: 3 << 20 + 1)
        #expect(layout.blockCount == 4)
        let have = Frame.have(channel: 1, Frame.Have(digest: Self.digest(), bitmap: layout.bitmap(of: [0, 2])))
        #expect(
            Array(FrameEncoder.buffer(for: have).readableBytesView)
                == Self.hex("00000026 27 00000001") + Self.digest() + [0x05]
        )
    }

    /// Bytes from hexadecimal text; spaces are for the eye.
    private static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { $0 != " " })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    // MARK: - HAVE

    @Test("a HAVE shorter than its 32-byte digest is malformed", arguments: [0, 1, 16, 31])
    func haveShortDigest(count: Int) {
        let payload = Self.be32(2) + [UInt8](repeating: 0xAA, count: count)
        let words = "expected a 32-byte digest and a bitmap of at most \(WireProtocol.maximumResourceBlocks / 8) bytes"
        #expect(throws: ProtocolError.malformed(.have, words)) {
            try F.parse(F.rawFrame(type: Self.have, payload: payload))
        }
    }

    @Test("a HAVE bitmap over 64 KiB is malformed; exactly 64 KiB parses, and fits the smallest frame limit")
    func haveBitmapLength() throws {
        let largest = [UInt8](repeating: 0xFF, count: WireProtocol.maximumResourceBlocks / 8)
        #expect(largest.count == 64 << 10)
        let words = "expected a 32-byte digest and a bitmap of at most \(WireProtocol.maximumResourceBlocks / 8) bytes"
        let over = F.rawFrame(type: Self.have, payload: Self.be32(2) + Self.digest() + largest + [0])
        #expect(throws: ProtocolError.malformed(.have, words)) { try F.parse(over) }

        let bytes = F.rawFrame(type: Self.have, payload: Self.be32(2) + Self.digest() + largest)
        // A connection that takes the smallest messages still takes the largest HAVE.
        let smallest = WireProtocol.maximumFrameLength(forMessageLength: 0)
        #expect(bytes.count - 4 <= smallest)
        #expect(
            try F.parse(bytes, limit: smallest) == .have(channel: 2, Frame.Have(digest: Self.digest(), bitmap: largest))
        )
    }

    @Test("a HAVE with no bitmap holds nothing; the parser leaves the bitmap's fit to the resource's writer")
    func haveBitmapContents() throws {
        let nothing = F.rawFrame(type: Self.have, payload: Self.be32(2) + [UInt8](repeating: 0, count: 32))
        #expect(try F.parse(nothing) == .have(channel: 2, .nothing))
        // Any bitmap up to 64 KiB parses: whether it fits the resource is checked against its layout.
        for bitmap: [UInt8] in [[0], [0x80], [1, 2, 3], [UInt8](repeating: 0, count: 1000)] {
            let bytes = F.rawFrame(type: Self.have, payload: Self.be32(4) + Self.digest(3) + bitmap)
            #expect(try F.parse(bytes) == .have(channel: 4, Frame.Have(digest: Self.digest(3), bitmap: bitmap)))
        }
    }

    @Test("seeded random BLOCK and HAVE bodies either parse back to their bytes or are malformed, never crash")
    func randomBodies() {
        var random = SplitMix64(seed: 0xB10C_4A7E)
        var outcomes = (blocks: 0, haves: 0, malformed: 0)
        for _ in 0..<2000 {
            let type = random.next() % 2 == 0 ? FrameType.block : .have
            // Often the right length for a BLOCK, so that its index checks are reached.
            let right = type == .block ? 8 + WireProtocol.blockDigestLength : 40
            let length = random.next() % 2 == 0 ? right : Int.random(in: 0...80, using: &random)
            var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if type == .block, payload.count >= 8, random.next() % 2 == 0 {
                let index = UInt32.random(in: 0...UInt32(WireProtocol.maximumResourceBlocks) * 2, using: &random)
                payload.replaceSubrange(4..<8, with: Self.be32(index))
            }
            let bytes = F.rawFrame(type: type.rawValue, payload: payload)
            do {
                guard let frame = try F.parse(bytes) else {
                    Issue.record("a whole frame waits for more")
                    continue
                }
                #expect(frame.type == type)
                #expect(Array(FrameEncoder.buffer(for: frame).readableBytesView) == bytes)
                if type == .block { outcomes.blocks += 1 } else { outcomes.haves += 1 }
            } catch {
                #expect(error.description.hasPrefix("malformed \(type) frame: "), "\(error)")
                outcomes.malformed += 1
            }
        }
        #expect(outcomes.blocks > 100)
        #expect(outcomes.haves > 100)
        #expect(outcomes.malformed > 100)
    }
}
