import PeerConnectivityCore
import Testing

/// TXT records a hostile advertiser could publish: the decoder stays total and bounded.
@Suite("TXTRecord: hostile records")
struct TXTRecordHostileTests {
    private static func entry(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count)] + bytes }

    @Test("overlong encodings, surrogates and code points past U+10FFFF in values are skipped, good entries kept")
    func invalidUTF8Forms() {
        let bad: [[UInt8]] = [
            [0xC0, 0xAF],  // overlong '/'
            [0xE0, 0x80, 0xAF],  // overlong '/', three bytes
            [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xF8, 0x88, 0x80, 0x80, 0x80],  // five-byte form
            [0xE2, 0x82],  // truncated
        ]
        var record: [UInt8] = []
        for (index, value) in bad.enumerated() {
            record += Self.entry(Array("k\(index)=".utf8) + value)
        }
        record += Self.entry(Array("good=✓".utf8))
        #expect(TXTRecord.decode(record) == ["good": "✓"])
    }

    @Test("a NUL inside a value is kept as text (the peer id's rules reject it where it matters)")
    func nulInValue() {
        #expect(TXTRecord.decode(Self.entry(Array("a=x".utf8) + [0] + Array("y".utf8))) == ["a": "x\u{0}y"])
    }

    @Test("the largest record, 65,535 bytes of one-byte boolean keys, decodes in one pass to at most 95 keys")
    func manyTinyEntries() {
        // Printable ASCII other than '=' gives 94 distinct one-byte keys (case-folded: fewer); the rest repeat.
        var record: [UInt8] = []
        var byte: UInt8 = 0x21
        while record.count + 2 <= TXTRecord.maximumRecordLength {
            record += [1, byte]
            byte = byte == 0x7E ? 0x21 : byte + 1
            if byte == UInt8(ascii: "=") { byte += 1 }
        }
        let decoded = TXTRecord.decode(record)
        #expect(decoded.count <= 95)
        #expect(decoded.values.allSatisfy { $0.isEmpty })
    }

    @Test("255 entries of 255 bytes with distinct keys decode whole (the size limit is the browser's)")
    func largestEntries() {
        var record: [UInt8] = []
        for index in 0..<255 {
            let key = Array(String(format: "k%03d=", index).utf8)
            record += Self.entry(key + [UInt8](repeating: UInt8(ascii: "v"), count: 255 - key.count))
        }
        #expect(record.count == 256 * 255)
        #expect(TXTRecord.decode(record).count == 255)
    }
}
