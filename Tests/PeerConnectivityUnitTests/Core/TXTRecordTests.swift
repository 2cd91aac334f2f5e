import Foundation
import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// The DNS-SD TXT record codec: strict, deterministic encoding and total, lenient decoding.
@Suite("TXTRecord")
struct TXTRecordTests {
    /// Bytes of an ASCII string, for writing records by hand.
    private static func bytes(_ string: String) -> [UInt8] {
        Array(string.utf8)
    }

    /// One length-prefixed string.
    private static func entry(_ string: String) -> [UInt8] {
        [UInt8(string.utf8.count)] + Array(string.utf8)
    }

    @Test(
        "round trip",
        arguments: [
            ["id": "7f3a", "v": "1"],
            ["name": "Grüße ☃ aus Köln", "empty": "", "eq": "a=b=c"],
            ["k": String(repeating: "x", count: 253)],
            ["Key With Spaces": " value ", "~!@#$%^&*()_+": "\u{0}\u{1}"],
            [:],
        ]
    )
    func roundTrip(entries: [String: String]) throws {
        let record = try TXTRecord.encode(entries)
        #expect(TXTRecord.decode(record) == entries)
    }

    @Test("an empty dictionary is one empty string")
    func emptyDictionary() throws {
        #expect(try TXTRecord.encode([:]) == [0])
        #expect(TXTRecord.decode([0]) == [:])
        #expect(TXTRecord.decode([UInt8]()) == [:])
    }

    @Test("entries are length-prefixed key=value strings sorted by key")
    func sortedAndDeterministic() throws {
        let record = try TXTRecord.encode(["b": "2", "a": "1", "c": ""])
        #expect(record == Self.entry("a=1") + Self.entry("b=2") + Self.entry("c="))
    }

    @Test("the longest entry is 255 bytes")
    func entryLengthLimit() throws {
        #expect(TXTRecord.maximumEntryLength == 255)
        let longest = try TXTRecord.encode(["k": String(repeating: "x", count: 253)])
        #expect(longest.count == 256)
        #expect(longest.first == 255)

        let tooLong = ["k": String(repeating: "x", count: 254)]
        #expect(throws: TXTRecordError.entryTooLong(key: "k")) { try TXTRecord.encode(tooLong) }
        // Multi-byte characters count as bytes.
        #expect(throws: TXTRecordError.entryTooLong(key: "k")) {
            try TXTRecord.encode(["k": String(repeating: "ü", count: 127)])
        }
    }

    @Test("invalid keys throw an error that names the key")
    func invalidKeys() {
        #expect(throws: TXTRecordError.keyContainsEquals(key: "a=b")) { try TXTRecord.encode(["a=b": "c"]) }
        #expect(throws: TXTRecordError.emptyKey) { try TXTRecord.encode(["": "c"]) }
        #expect(throws: TXTRecordError.invalidKeyCharacter(key: "schlüssel")) {
            try TXTRecord.encode(["schlüssel": "c"])
        }
        #expect(throws: TXTRecordError.invalidKeyCharacter(key: "tab\t")) { try TXTRecord.encode(["tab\t": "c"]) }
        #expect(throws: TXTRecordError.duplicateKey(key: "id")) { try TXTRecord.encode(["id": "1", "ID": "2"]) }
    }

    @Test("a record longer than 65,535 bytes throws")
    func recordLengthLimit() {
        var entries: [String: String] = [:]
        for index in 0..<300 {
            entries["key\(index)"] = String(repeating: "v", count: 240)
        }
        #expect(throws: TXTRecordError.recordTooLong) { try TXTRecord.encode(entries) }
    }

    @Test("error descriptions say what is wrong and name the key")
    func errorDescriptions() {
        let tooLong = TXTRecordError.entryTooLong(key: "peer-name")
        #expect(tooLong.description.contains("\"peer-name"))
        #expect(tooLong.description.contains("255 bytes"))
        #expect(tooLong.key == "peer-name")
        #expect(TXTRecordError.keyContainsEquals(key: "a=b").description.contains("\"a=b\" contains '='"))
        #expect(TXTRecordError.emptyKey.description.contains("empty"))
        #expect(TXTRecordError.emptyKey.key == nil)
        #expect(TXTRecordError.duplicateKey(key: "ID").description.contains("\"ID\""))
        #expect(TXTRecordError.entryTooLong(key: "a") != TXTRecordError.entryTooLong(key: "b"))
    }

    @Test("a truncated string ends decoding and keeps what came before")
    func truncated() {
        #expect(TXTRecord.decode([5] + Self.bytes("a=")) == [:])
        #expect(TXTRecord.decode(Self.entry("a=1") + [9] + Self.bytes("b=2")) == ["a": "1"])
        #expect(TXTRecord.decode(Self.entry("a=1") + [255]) == ["a": "1"])
    }

    @Test("zero-length strings are skipped")
    func zeroLengthStrings() {
        #expect(TXTRecord.decode([0, 0] + Self.entry("a=1") + [0]) == ["a": "1"])
    }

    @Test("a string without '=' is a boolean attribute with an empty value")
    func booleanAttribute() {
        #expect(TXTRecord.decode(Self.entry("flag") + Self.entry("x=")) == ["flag": "", "x": ""])
    }

    @Test("empty and non-ASCII keys are skipped")
    func invalidKeysAreSkipped() {
        #expect(TXTRecord.decode(Self.entry("=value") + Self.entry("ok=1")) == ["ok": "1"])
        #expect(TXTRecord.decode(Self.entry("=")) == [:])
        #expect(TXTRecord.decode(Self.entry("ké=1") + Self.entry("\u{7F}=2")) == [:])
    }

    @Test("values that are not UTF-8 are skipped")
    func invalidUTF8() {
        let record =
            [4] + Self.bytes("a=") + [0xFF, 0xFE] + Self.entry("b=ok") + [4] + Self.bytes("c=") + [0xC3, 0x28]
        #expect(TXTRecord.decode(record) == ["b": "ok"])
    }

    @Test("the first occurrence of a key wins, compared case-insensitively")
    func duplicateKeys() {
        #expect(TXTRecord.decode(Self.entry("a=1") + Self.entry("a=2") + Self.entry("A=3")) == ["a": "1"])
        // The first occurrence counts even when its value cannot be read.
        let record = [3] + Self.bytes("a=") + [0xFF] + Self.entry("a=2")
        #expect(TXTRecord.decode(record) == [:])
    }

    @Test("decodes any collection of bytes, including slices with non-zero indices")
    func collections() throws {
        let record = try TXTRecord.encode(["a": "1", "b": "2"])
        let padded = [0xAA, 0xBB] + record
        #expect(TXTRecord.decode(padded[2...]) == ["a": "1", "b": "2"])
        #expect(TXTRecord.decode(Data(padded).dropFirst(2)) == ["a": "1", "b": "2"])
        #expect(TXTRecord.decode(record.lazy.map { $0 }) == ["a": "1", "b": "2"])
    }

    @Test("random bytes never crash the decoder, and what it decodes encodes back")
    func randomBytes() {
        var generator = SplitMix64(seed: 0x5EED_7E57_0000_0001)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...300, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            Self.checkDecoded(TXTRecord.decode(bytes), from: bytes)
        }
    }

    @Test("random well-framed records never crash the decoder")
    func randomFramedRecords() {
        var generator = SplitMix64(seed: 0x5EED_7E57_0000_0002)
        // Mostly printable ASCII and '=', with some arbitrary bytes, so that many strings look like attributes.
        let alphabet: [UInt8] =
            Array(0x20...0x7E) + Array(repeating: UInt8(ascii: "="), count: 20) + [0, 0x80, 0xC3, 0xFF]
        for _ in 0..<3_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let length = Int.random(in: 0...40, using: &generator)
                bytes.append(UInt8(length))
                bytes += (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            }
            if Bool.random(using: &generator), !bytes.isEmpty {
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
            }
            Self.checkDecoded(TXTRecord.decode(bytes), from: bytes)
        }
    }

    /// Checks that decoded attributes are well-formed and encode back to themselves.
    private static func checkDecoded(_ decoded: [String: String], from bytes: [UInt8]) {
        for key in decoded.keys {
            #expect(!key.isEmpty && key.utf8.allSatisfy { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "=") })
        }
        do {
            #expect(TXTRecord.decode(try TXTRecord.encode(decoded)) == decoded, "input \(bytes)")
        } catch {
            // A 255-byte boolean attribute ("key" without '=') grows by one byte when encoded as "key=".
            #expect(error.key.map { decoded[$0] == "" && $0.utf8.count >= 254 } == true, "input \(bytes)")
        }
    }
}
