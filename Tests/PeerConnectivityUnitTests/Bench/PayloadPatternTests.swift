import Foundation
import Testing

@testable import PeerConnectivityBench

@Suite("Payload pattern")
struct PayloadPatternTests {
    let pattern = PayloadPattern(maximumSize: 4096)

    func payload(_ sequence: UInt64, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { pattern.write(sequence: sequence, into: $0) }
        return bytes
    }

    func inspect(_ bytes: [UInt8], expectedSize: Int) -> PayloadInspection {
        bytes.withUnsafeBytes { pattern.inspect($0, expectedSize: expectedSize) }
    }

    @Test("every size carries its sequence number and checks intact", arguments: [1, 2, 7, 8, 9, 64, 1000, 4096])
    func roundTrip(size: Int) {
        for sequence: UInt64 in [0, 1, 250, 251, 65_537, 1 << 40] {
            let inspection = inspect(payload(sequence, size: size), expectedSize: size)
            let width = min(size, 8)
            let mask: UInt64 = width == 8 ? .max : (1 << (8 * UInt64(width))) - 1
            #expect(inspection == PayloadInspection(sequenceTag: sequence & mask, tagBytes: width, isIntact: true))
        }
    }

    @Test("a changed byte anywhere after the sequence number is caught")
    func corruption() {
        let original = payload(42, size: 1000)
        for index in [8, 9, 500, 999] {
            var bytes = original
            bytes[index] ^= 0x01
            let inspection = inspect(bytes, expectedSize: 1000)
            #expect(!inspection.isIntact)
            #expect(inspection.sequenceTag == 42)
        }
    }

    @Test("another message's body under the right sequence number is caught")
    func swappedBody() {
        var bytes = payload(7, size: 300)
        bytes.replaceSubrange(8..., with: payload(8, size: 300)[8...])
        #expect(!inspect(bytes, expectedSize: 300).isIntact)
        #expect(payload(7, size: 300) != payload(8, size: 300))
    }

    @Test("wrong sizes are not intact; too short to name a message is untagged")
    func sizes() {
        let bytes = payload(5, size: 64)
        #expect(!inspect(Array(bytes.prefix(63)), expectedSize: 64).isIntact)
        #expect(!inspect(bytes + [0], expectedSize: 64).isIntact)
        #expect(inspect(Array(bytes.prefix(3)), expectedSize: 64).tagBytes == 0)
        #expect(inspect([], expectedSize: 1).tagBytes == 0)
        #expect(!inspect([5, 0], expectedSize: 1).isIntact)
    }
}
