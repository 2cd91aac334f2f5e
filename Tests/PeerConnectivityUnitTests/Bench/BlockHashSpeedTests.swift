import PeerConnectivityCore
import Testing

@testable import PeerConnectivityBench

/// `test-runner hash`'s measurement: it hashes what it says, with each kind, every round (what it times is not
/// asserted: the machine's speed is not the test's).
@Suite("Block hash speed")
struct BlockHashSpeedTests {
    @Test("each kind hashes the blocks it counts, each starting with its number, the same in every round")
    func hashesEveryBlock() {
        let speed = BlockHashSpeed(mebibytes: 3, rounds: 2)
        #expect(speed.kinds.map(\.name) == ["XXH64", "XXH3-64"])
        var block = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for (kind, measured) in zip([BlockDigestKind.xxh64, .xxh3], speed.kinds) {
            var expected: UInt64 = 0
            for number in 0..<3 {
                block.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(number).littleEndian, as: UInt64.self) }
                let digest = block.withUnsafeBytes { BlockHasher.digest($0, kind) }
                expected ^= digest.reduce(0) { $0 << 8 | UInt64($1) }
            }
            #expect(measured.digests == expected, "\(measured.name)")
            #expect(measured.secondsPerGibibyte.count == 2)
            #expect(measured.secondsPerGibibyte.allSatisfy { $0 > 0 })
        }
        #expect(speed.kinds[0].digests != speed.kinds[1].digests)
    }
}
