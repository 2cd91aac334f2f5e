import Foundation
import PeerConnectivityCore
import Testing

@testable import PeerConnectivity

private let id = "3c5f1e4d-682a-4ab0-8e6c-8beeffa5c964"

private func text(_ string: String) -> [UInt8] { Array(string.utf8) }

/// TXT records from the network as the browser reads them: a hostile advertiser's are ignored or cleaned.
@Suite("DiscoveryRecord: hostile TXT records")
struct DiscoveryRecordHostileTests {
    private static func record(_ entries: [[UInt8]]) -> [UInt8] {
        entries.flatMap { [UInt8($0.count)] + $0 }
    }

    @Test("a valid record names the peer; its pc.v and other pc.* keys never reach discoveryInfo")
    func reservedKeysDropped() throws {
        let bytes = Self.record([
            text("pc.id=\(id)"), text("pc.name=alice"), text("pc.v=1"),
            text("pc.admin=yes"), text("PC.Trusted=1"), text("room=blue"),
        ])
        let record = try #require(DiscoveryRecord(txtRecord: bytes))
        #expect(record.peer.id == UUID(uuidString: id))
        #expect(record.peer.displayName == "alice")
        #expect(record.discoveryInfo == ["room": "blue"])
    }

    @Test(
        "records that do not name a valid peer are ignored",
        arguments: [
            ("no pc.id", [text("pc.name=alice")]),
            ("pc.id not a UUID", [text("pc.id=not-a-uuid"), text("pc.name=alice")]),
            ("no pc.name", [text("pc.id=\(id)")]),
            ("empty pc.name", [text("pc.id=\(id)"), text("pc.name=")]),
            ("pc.name of 64 bytes", [text("pc.id=\(id)"), text("pc.name=" + String(repeating: "n", count: 64))]),
            ("pc.name with NUL", [text("pc.id=\(id)"), text("pc.name=a") + [0]]),
            ("pc.name not UTF-8", [text("pc.id=\(id)"), text("pc.name=") + [0xFF, 0xFE]]),
            ("pc.id after a bad first pc.id", [text("pc.id=") + [0xFF], text("pc.id=\(id)"), text("pc.name=a")]),
        ]
    )
    func invalid(_ label: String, _ entries: [[UInt8]]) {
        #expect(DiscoveryRecord(txtRecord: Self.record(entries)) == nil, "\(label) was accepted")
    }

    @Test(
        "a repeated pc.id or pc.name, in any order and letter case, names no peer: Avahi reverses the strings",
        arguments: [
            [text("pc.id=not-a-uuid"), text("pc.id=\(id)"), text("pc.name=a")],
            [text("pc.id=\(id)"), text("pc.id=not-a-uuid"), text("pc.name=a")],
            [text("PC.ID=\(id)"), text("pc.id=\(id)"), text("pc.name=a")],
            [text("pc.id=\(id)"), text("pc.name=a"), text("pc.name=b")],
            [text("pc.id=\(id)"), text("pc.name=a"), text("Pc.Name")],
        ]
    )
    func repeatedIdentity(_ entries: [[UInt8]]) {
        #expect(DiscoveryRecord(txtRecord: Self.record(entries)) == nil)
        #expect(DiscoveryRecord(txtRecord: Self.record(entries.reversed())) == nil)
    }

    @Test("a repeated discoveryInfo key is dropped, whichever value came first; the others are kept")
    func repeatedInfoKey() throws {
        let bytes = Self.record([
            text("pc.id=\(id)"), text("pc.name=a"), text("room=red"), text("ROOM=blue"), text("floor=2"),
        ])
        let record = try #require(DiscoveryRecord(txtRecord: bytes))
        #expect(record.discoveryInfo == ["floor": "2"])
        let reversed = Self.record([
            text("floor=2"), text("room=blue"), text("room=red"), text("pc.name=a"), text("pc.id=\(id)"),
        ])
        #expect(try #require(DiscoveryRecord(txtRecord: reversed)).discoveryInfo == ["floor": "2"])
    }

    @Test("a record over 8 KiB is ignored whole, even when it names a valid peer")
    func oversized() {
        var entries = [text("pc.id=\(id)"), text("pc.name=big")]
        for index in 0..<40 {
            entries.append(text("k\(index)=" + String(repeating: "x", count: 240)))
        }
        let bytes = Self.record(entries)
        #expect(bytes.count > DiscoveryRecord.maximumReceivedTXTLength)
        #expect(DiscoveryRecord(txtRecord: bytes) == nil)
        #expect(DiscoveryRecord(txtRecord: Self.record(Array(entries.prefix(20)))) != nil)
    }

    @Test("random bytes behind a valid id and name never crash and keep the peer")
    func randomTail() {
        var generator = SystemRandomNumberGenerator()
        let head = Self.record([text("pc.id=\(id)"), text("pc.name=alice")])
        for _ in 0..<2_000 {
            let tail = (0..<Int.random(in: 0...400, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let record = DiscoveryRecord(txtRecord: head + tail)
            #expect(record?.peer.displayName == "alice")
            #expect(record?.discoveryInfo.keys.contains { $0.lowercased().hasPrefix("pc.") } == false)
        }
    }
}
