import PeerConnectivityCore
import Testing

/// `XXH3Hasher`: XXH3-64 with seed 0 and the default secret, checked against digests printed by the
/// reference implementation (the `xxhash` Python package, 3.x, `xxhash.xxh3_64_hexdigest(data)`), whole
/// and in pieces.
@Suite("XXH3 hasher")
struct XXH3HasherTests {
    private static func pattern(_ count: Int) -> [UInt8] { HashInput.pattern(count) }

    private static func hex(_ digest: UInt64) -> String { HashInput.hex(digest) }

    private static func digest(_ bytes: [UInt8]) -> String {
        hex(bytes.withUnsafeBytes { XXH3Hasher.digest($0) })
    }

    /// The digest of `bytes` taken as the first `first` bytes, then pieces of `piece` bytes.
    private static func streamed(_ bytes: [UInt8], first: Int, piece: Int) -> String {
        var hasher = XXH3Hasher()
        HashInput.inPieces(bytes, first: first, piece: piece) { hasher.update($0) }
        return hex(hasher.finalize())
    }

    @Test(
        "matches the reference digests of short strings",
        arguments: [
            ("", "2d06800538d394c2"),
            ("a", "e6c632b61e964e1f"),
            ("abc", "78af5f94892f3950"),
            ("hello", "9555e8555c62dcfd"),
        ]
    )
    func strings(input: String, expected: String) {
        #expect(Self.digest(Array(input.utf8)) == expected)
    }

    @Test(
        "matches the reference at both ends of every length class",
        arguments: [
            (0, "2d06800538d394c2"),
            (1, "4c5cca45d0f4811f"), (2, "a7e250c97710ff27"), (3, "15f7093b173d005c"),
            (4, "dca012f95811b6b9"), (5, "b290cafc7b254345"), (8, "dec6a9a43575982e"),
            (9, "cbe393399f17ffbd"), (12, "46aaf92c7550afa4"), (16, "7e484c18d74895d0"),
            (17, "208bde5ee2bed407"), (32, "03df0ac5255d1446"), (33, "199a362122d71f46"),
            (64, "dd30702ab46b3745"), (65, "fab36b851b94ce20"), (96, "d245cd2541582982"),
            (97, "60e3e1d0d43785b3"), (127, "a915ed6396db8cc0"), (128, "f92b70eaa21a6288"),
            (129, "f8f76713f2bb60fa"), (130, "303a2c3823c3c34a"), (160, "c90911ffcef461e2"),
            (200, "12fdb864685f344d"), (239, "caa9b7a588464745"), (240, "ccc7375172c41f03"),
            (241, "0b3b630948ce4a00"), (255, "89932170686cdd9a"), (256, "ec85b75bafe6ca74"),
            (257, "12ef0ff633841459"), (511, "0fec8fb6eae1df8b"), (1023, "f0d330ce2b3300fb"),
            (1024, "23bc880ebf0d29c6"), (1025, "c09fdfbc398c7d82"), (1088, "a16bad67843c5a45"),
            (2048, "19f6f9c987331373"), (4096, "a3c19f8174cde0bb"), (65536, "cf188822048798b0"),
        ]
    )
    func lengths(count: Int, expected: String) {
        #expect(Self.digest(Self.pattern(count)) == expected)
    }

    @Test("matches the reference over a whole 1 MiB block")
    func block() {
        #expect(Self.digest(Self.pattern(1 << 20)) == "269eb834f6c110a9")
    }

    @Test(
        "gives the one-shot digest whatever the pieces the bytes come in",
        arguments: [
            (17, "208bde5ee2bed407"), (240, "ccc7375172c41f03"), (241, "0b3b630948ce4a00"),
            (600, "2995ea0b8d57fd72"), (1100, "ceee0f86a8474bed"),
        ]
    )
    func pieces(count: Int, expected: String) {
        let bytes = Self.pattern(count)
        let whole = Self.digest(bytes)
        #expect(whole == expected)
        for first in 0...count {
            for piece in [1, 7, 63, 64, 65, 256] {
                let streamed = Self.streamed(bytes, first: first, piece: piece)
                #expect(streamed == whole, "\(count) bytes split at \(first), then \(piece) at a time")
            }
        }
    }

    @Test("a 1 MiB block in 64 KiB pieces and in 1000-byte pieces matches the reference")
    func chunks() {
        let bytes = Self.pattern(1 << 20)
        #expect(Self.streamed(bytes, first: 0, piece: 1 << 16) == "269eb834f6c110a9")
        #expect(Self.streamed(bytes, first: 1 << 16, piece: 1 << 16) == "269eb834f6c110a9")
        #expect(Self.streamed(bytes, first: 0, piece: 1000) == "269eb834f6c110a9")
    }

    @Test("taking the digest leaves the hasher free to take more")
    func finalizeKeepsState() {
        let bytes = Self.pattern(1025)
        var hasher = XXH3Hasher()
        bytes.withUnsafeBytes { all in
            for start in stride(from: 0, to: all.count, by: 100) {
                hasher.update(UnsafeRawBufferPointer(rebasing: all[start..<min(start + 100, all.count)]))
                let sofar = Self.hex(hasher.finalize())
                #expect(sofar == Self.digest(Array(bytes[..<min(start + 100, all.count)])))
            }
        }
        #expect(Self.hex(hasher.finalize()) == "c09fdfbc398c7d82")
    }

    @Test("one flipped bit changes the digest")
    func bitFlip() {
        var bytes = Self.pattern(1 << 16)
        let before = Self.digest(bytes)
        bytes[40_000] ^= 0x10
        #expect(Self.digest(bytes) != before)
    }
}
