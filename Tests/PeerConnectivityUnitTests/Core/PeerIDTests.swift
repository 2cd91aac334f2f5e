import Foundation
import PeerConnectivityCore
import Testing

/// `PeerID`: display name rules, identity by unique id, persistence as JSON.
@Suite("PeerID")
struct PeerIDTests {
    @Test("an empty display name is rejected")
    func emptyName() {
        #expect(throws: PeerIDError.emptyDisplayName) { try PeerID(displayName: "") }
        #expect(throws: PeerIDError.emptyDisplayName) { try PeerID.validate(displayName: "") }
    }

    @Test("63 bytes of UTF-8 is the longest name; 64 is rejected")
    func lengthLimit() throws {
        #expect(PeerID.maximumDisplayNameLength == 63)
        let longest = String(repeating: "a", count: 63)
        #expect(try PeerID(displayName: longest).displayName == longest)
        #expect(throws: PeerIDError.displayNameTooLong(64)) {
            try PeerID(displayName: String(repeating: "a", count: 64))
        }
        #expect(throws: PeerIDError.displayNameTooLong(300)) {
            try PeerID(displayName: String(repeating: "a", count: 300))
        }
    }

    @Test("the length is counted in bytes of UTF-8, not in characters")
    func lengthInBytes() throws {
        // "é" is 2 bytes: 31 of them and one ASCII letter make 63 bytes, 32 of them make 64.
        _ = try PeerID(displayName: String(repeating: "é", count: 31) + "a")
        #expect(throws: PeerIDError.displayNameTooLong(64)) {
            try PeerID(displayName: String(repeating: "é", count: 32))
        }
        // "😀" is 4 bytes: 15 of them and three letters make 63 bytes, 16 of them make 64.
        _ = try PeerID(displayName: String(repeating: "😀", count: 15) + "abc")
        #expect(throws: PeerIDError.displayNameTooLong(64)) {
            try PeerID(displayName: String(repeating: "😀", count: 16))
        }
        // One character of 8 bytes (a flag: two regional indicators) counts as 8.
        let flags = String(repeating: "🇫🇷", count: 8)
        #expect(flags.count == 8)
        #expect(throws: PeerIDError.displayNameTooLong(64)) { try PeerID(displayName: flags) }
    }

    @Test("a NUL anywhere in the name is rejected", arguments: ["\u{0}", "a\u{0}", "\u{0}a", "al\u{0}ice"])
    func nulRejected(name: String) {
        #expect(throws: PeerIDError.displayNameContainsNUL) { try PeerID(displayName: name) }
    }

    @Test("other names are accepted as they are", arguments: [" ", "Alice's iPhone", "Grüße ☃", "a\tb\nc", "\u{7F}"])
    func acceptedNames(name: String) throws {
        let peer = try PeerID(displayName: name)
        #expect(peer.displayName == name)
    }

    @Test("two PeerIDs with the same name are different peers")
    func sameNameDiffers() throws {
        let first = try PeerID(displayName: "alice")
        let second = try PeerID(displayName: "alice")
        #expect(first != second)
        #expect(first.id != second.id)
        #expect(Set([first, second]).count == 2)
    }

    @Test("equality and hashing use the unique id alone")
    func identityIsTheID() throws {
        let id = UUID()
        let one = try PeerID(id: id, displayName: "alice")
        let renamed = try PeerID(id: id, displayName: "bob")
        #expect(one == renamed)
        #expect(one.hashValue == renamed.hashValue)
        #expect(Set([one, renamed]).count == 1)
    }

    @Test("init(id:displayName:) checks the name too")
    func initWithIDValidates() {
        #expect(throws: PeerIDError.emptyDisplayName) { try PeerID(id: UUID(), displayName: "") }
        #expect(throws: PeerIDError.displayNameContainsNUL) { try PeerID(id: UUID(), displayName: "a\u{0}") }
    }

    @Test("a JSON round trip keeps the id and the name")
    func jsonRoundTrip() throws {
        let peer = try PeerID(displayName: "Grüße ☃ aus Köln")
        let data = try JSONEncoder().encode(peer)
        let restored = try JSONDecoder().decode(PeerID.self, from: data)
        #expect(restored == peer)
        #expect(restored.id == peer.id)
        #expect(restored.displayName == peer.displayName)
    }

    @Test(
        "decoding JSON with an invalid name throws PeerIDError",
        arguments: [
            ("", PeerIDError.emptyDisplayName),
            (String(repeating: "x", count: 64), PeerIDError.displayNameTooLong(64)),
            ("a\\u0000b", PeerIDError.displayNameContainsNUL),
        ]
    )
    func jsonInvalidName(escapedName: String, expected: PeerIDError) {
        let json = #"{"id":"1A2B3C4D-0000-4000-8000-000000000001","displayName":"\#(escapedName)"}"#
        #expect(throws: expected) { try JSONDecoder().decode(PeerID.self, from: Data(json.utf8)) }
    }

    @Test("decoding JSON without a field throws DecodingError")
    func jsonMissingField() {
        let noName = #"{"id":"1A2B3C4D-0000-4000-8000-000000000001"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PeerID.self, from: Data(noName.utf8)) }
        let noID = #"{"displayName":"alice"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PeerID.self, from: Data(noID.utf8)) }
        let badID = #"{"id":"not-a-uuid","displayName":"alice"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PeerID.self, from: Data(badID.utf8)) }
    }

    @Test("description is the name and the first eight characters of the id, lowercased")
    func description() throws {
        let id = try #require(UUID(uuidString: "1A2B3C4D-5E6F-4000-8000-0000000000FF"))
        let peer = try PeerID(id: id, displayName: "alice")
        #expect(peer.description == "alice (1a2b3c4d)")
        #expect("\(peer)" == "alice (1a2b3c4d)")
    }

    @Test("errors describe what is wrong")
    func errorDescriptions() {
        #expect(PeerIDError.emptyDisplayName.description.contains("empty"))
        #expect(PeerIDError.displayNameTooLong(70).description.contains("70 bytes"))
        #expect(PeerIDError.displayNameContainsNUL.description.contains("NUL"))
        #expect(PeerIDError.displayNameTooLong(64) != PeerIDError.displayNameTooLong(65))
    }
}
