import PeerConnectivityCore

/// How fast this machine makes a resource's block digests, each kind the protocol knows: 1 MiB blocks taken in
/// 64 KiB pieces, as CHUNK frames bring them, from one buffer the caches hold (the hash alone, no I/O).
/// `test-runner hash` prints it; a resource's CPU a GiB reads better beside it.
public struct BlockHashSpeed: Sendable {
    /// One kind's runs.
    public struct Kind: Sendable {
        /// The hash's name as docs/PROTOCOL.md gives it: "XXH64" or "XXH3-64".
        public let name: String
        /// Seconds a GiB, one figure a round.
        public var secondsPerGibibyte: [Double]
        /// The XOR of the round's block digests (each block starts with its index, so each digest differs):
        /// the same in every round, and what keeps a round's work from being left out.
        public var digests: UInt64
    }

    /// XXH64, then XXH3-64.
    public private(set) var kinds: [Kind]

    /// Hashes `mebibytes` blocks of 1 MiB with each kind in turn, `rounds` times (XXH64, XXH3-64, XXH64, ...).
    ///
    /// - Parameters:
    ///   - mebibytes: the blocks a round hashes; at least 1 is.
    ///   - rounds: rounds for each kind; at least 1 is.
    public init(mebibytes: Int, rounds: Int) {
        let measured: [(BlockDigestKind, String)] = [(.xxh64, "XXH64"), (.xxh3, "XXH3-64")]
        kinds = measured.map { Kind(name: $0.1, secondsPerGibibyte: [], digests: 0) }
        let blocks = max(1, mebibytes)
        var block = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let clock = ContinuousClock()
        for _ in 0..<max(1, rounds) {
            for (index, (kind, _)) in measured.enumerated() {
                var digests: UInt64 = 0
                let start = clock.now
                for number in 0..<blocks {
                    digests ^= Self.digest(of: &block, number: number, kind)
                }
                let elapsed = clock.now - start
                kinds[index].secondsPerGibibyte.append(elapsed.seconds * 1024 / Double(blocks))
                kinds[index].digests = digests
            }
        }
    }

    /// The digest of `block` with `number` in its first 8 bytes, taken in 64 KiB pieces.
    static func digest(of block: inout [UInt8], number: Int, _ kind: BlockDigestKind) -> UInt64 {
        block.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: UInt64(number).littleEndian, as: UInt64.self)
            var hasher = BlockHasher(kind)
            for piece in stride(from: 0, to: bytes.count, by: 1 << 16) {
                hasher.update(UnsafeRawBufferPointer(rebasing: bytes[piece..<min(bytes.count, piece + (1 << 16))]))
            }
            return hasher.finalize().reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
}
