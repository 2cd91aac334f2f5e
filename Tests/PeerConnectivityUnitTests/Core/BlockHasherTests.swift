import PeerConnectivityCore
import Testing

/// `BlockHasher`: XXH64 with seed 0, checked against digests printed by the reference implementation
/// (the `xxhash` Python package, 3.x, `xxhash.xxh64(data).hexdigest()`), whole and in pieces; and its
/// XXH3-64 kind in the same byte order (`XXH3HasherTests` checks that hash itself).
@Suite("Block hasher")
struct BlockHasherTests {
    private static func pattern(_ count: Int) -> [UInt8] { HashInput.pattern(count) }

    private static func hex(_ bytes: [UInt8]) -> String { HashInput.hex(bytes) }

    private static func digest(_ bytes: [UInt8]) -> String {
        hex(bytes.withUnsafeBytes { BlockHasher.digest($0, .xxh64) })
    }

    @Test(
        "matches the reference digests",
        arguments: [
            ("", "ef46db3751d8e999"),
            ("a", "d24ec4f1a98c6e5b"),
            ("abc", "44bc2cf5ad770999"),
            ("hello", "26c7827d889f6da3"),
            ("0123456789abcdef0123456789abcdef", "642a94958e71e6c5"),
        ]
    )
    func reference(input: String, expected: String) {
        #expect(Self.digest(Array(input.utf8)) == expected)
    }

    @Test("matches the reference over 1,280 bytes and over a whole 1 MiB block")
    func longInputs() {
        let bytes = (0..<5).flatMap { _ in (0..<256).map { UInt8($0) } }
        #expect(Self.digest(bytes) == "afc184ad7938a354")
        #expect(Self.digest(Self.pattern(1 << 20)) == "292cc494f5a2e5ec")
    }

    @Test("gives the same digest whatever the pieces the bytes come in")
    func pieces() {
        let bytes = Self.pattern(300)
        let whole = Self.digest(bytes)
        for first in 0...bytes.count {
            for second in [1, 7, 31, 32, 33, 64] {
                var hasher = BlockHasher(.xxh64)
                HashInput.inPieces(bytes, first: first, piece: second) { hasher.update($0) }
                #expect(Self.hex(hasher.finalize()) == whole, "split at \(first), then \(second) at a time")
            }
        }
    }

    @Test("a 1 MiB block in 64 KiB chunks, as CHUNK frames carry it, matches the reference")
    func chunks() {
        let bytes = Self.pattern(1 << 20)
        var hasher = BlockHasher(.xxh64)
        HashInput.inPieces(bytes, first: 0, piece: 1 << 16) { hasher.update($0) }
        #expect(Self.hex(hasher.finalize()) == "292cc494f5a2e5ec")
    }

    @Test("the XXH3-64 kind gives the reference's digest in the order it prints it, whole and in pieces")
    func xxh3Kind() {
        // xxhash.xxh3_64_hexdigest(b"abc"), and of the 1 MiB pattern.
        #expect(Self.hex(Array("abc".utf8).withUnsafeBytes { BlockHasher.digest($0, .xxh3) }) == "78af5f94892f3950")
        let bytes = Self.pattern(1 << 20)
        var hasher = BlockHasher(.xxh3)
        #expect(hasher.kind == .xxh3)
        HashInput.inPieces(bytes, first: 0, piece: 1000) { hasher.update($0) }
        #expect(Self.hex(hasher.finalize()) == "269eb834f6c110a9")
        #expect(Self.hex(bytes.withUnsafeBytes { BlockHasher.digest($0, .xxh64) }) != Self.hex(hasher.finalize()))
    }

    @Test("one flipped bit changes the digest")
    func bitFlip() {
        var bytes = Self.pattern(1 << 16)
        let before = Self.digest(bytes)
        bytes[40_000] ^= 0x10
        #expect(Self.digest(bytes) != before)
    }
}
