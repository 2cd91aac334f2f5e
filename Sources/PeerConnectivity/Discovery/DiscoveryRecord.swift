import Foundation
import PeerConnectivityCore

/// What an advertiser publishes through DNS-SD, and the rules it is checked against.
///
/// The service instance name is the peer's UUID (unique, never renamed on a clash); the TXT record
/// carries `pc.id`, `pc.name` and `pc.v` beside the application's discoveryInfo. TXT records are
/// public and unauthenticated: what they say is a hint for discovery, never proof of identity.
struct DiscoveryRecord: Sendable {
    static let idKey = "pc.id"
    static let nameKey = "pc.name"
    static let versionKey = "pc.v"
    static let reservedPrefix = "pc."
    /// TXT records received that are longer than this are ignored: 8 KiB, more than one mDNS packet
    /// carries in practice, so only a hostile or broken advertiser sends more.
    static let maximumReceivedTXTLength = 8 << 10

    var peer: PeerID
    var discoveryInfo: [String: String]

    /// The DNS-SD instance name of a peer's service.
    static func instanceName(for peer: PeerID) -> String {
        peer.id.uuidString.lowercased()
    }

    /// "_name._tcp" for a service type already validated.
    static func registrationType(_ serviceType: String) -> String {
        "_\(serviceType)._tcp"
    }

    /// Checks a service type as MPC does: 1-15 characters of a-z, 0-9 and '-', at least one letter,
    /// no leading, trailing or double hyphen.
    ///
    /// - Throws: ``DiscoveryError/invalidServiceType(_:)`` saying which rule is broken.
    static func validate(serviceType: String) throws(DiscoveryError) {
        let bytes = Array(serviceType.utf8)
        func fail(_ why: String) -> DiscoveryError {
            .invalidServiceType("invalid service type \"\(serviceType)\": \(why)")
        }
        guard (1...15).contains(bytes.count) else { throw fail("must be 1 to 15 characters, is \(bytes.count)") }
        let allowed = bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
        guard allowed else { throw fail("only a-z, 0-9 and '-' are allowed") }
        guard bytes.contains(where: { (0x61...0x7A).contains($0) }) else { throw fail("needs at least one letter") }
        guard bytes.first != 0x2D, bytes.last != 0x2D else { throw fail("must not start or end with '-'") }
        guard !serviceType.contains("--") else { throw fail("must not contain \"--\"") }
    }

    /// Checks discoveryInfo against the TXT record rules (``TXTRecord/encode(_:)``: keys not empty,
    /// printable ASCII without '=', not differing only in case; each key=value at most 255 bytes) and
    /// keeps keys starting with "pc.", in any letter case, for the library's own entries.
    ///
    /// - Throws: ``DiscoveryError/invalidDiscoveryInfo(_:)`` naming the key.
    static func validate(discoveryInfo: [String: String]) throws(DiscoveryError) {
        if let key = discoveryInfo.keys.first(where: { $0.lowercased().hasPrefix(reservedPrefix) }) {
            throw .invalidDiscoveryInfo("discoveryInfo key \"\(key)\" uses the reserved prefix \"\(reservedPrefix)\"")
        }
        do {
            _ = try TXTRecord.encode(discoveryInfo)
        } catch {
            throw .invalidDiscoveryInfo("discoveryInfo: \(error)")
        }
    }

    /// The TXT record bytes.
    func txtRecord() throws(DiscoveryError) -> [UInt8] {
        var entries = discoveryInfo
        entries[Self.idKey] = peer.id.uuidString.lowercased()
        entries[Self.nameKey] = peer.displayName
        entries[Self.versionKey] = String(WireProtocol.version)
        do {
            return try TXTRecord.encode(entries)
        } catch {
            throw .invalidDiscoveryInfo("\(error)")
        }
    }

    /// Reads a record from TXT bytes received from the network; `nil` when they do not name a valid peer
    /// (no `pc.id` that is a UUID, no `pc.name` that is a valid display name: 1-63 bytes of UTF-8 without
    /// NUL; either key more than once) or are longer than ``maximumReceivedTXTLength``. What
    /// ``TXTRecord/decode(_:)`` cannot read (bad keys, values that are not UTF-8, truncated strings) is
    /// skipped; other keys with the reserved "pc." prefix, and keys that occur more than once, are dropped
    /// from the discoveryInfo the application sees.
    init?(txtRecord: [UInt8]) {
        guard txtRecord.count <= Self.maximumReceivedTXTLength else { return nil }
        let repeated = Self.repeatedKeys(in: txtRecord)
        guard !repeated.contains(Self.idKey), !repeated.contains(Self.nameKey) else { return nil }
        var entries = TXTRecord.decode(txtRecord)
        guard let idText = entries.removeValue(forKey: Self.idKey), let id = UUID(uuidString: idText),
            let name = entries.removeValue(forKey: Self.nameKey), let peer = try? PeerID(id: id, displayName: name)
        else { return nil }
        self.peer = peer
        self.discoveryInfo = entries.filter {
            let key = $0.key.lowercased()
            return !key.hasPrefix(Self.reservedPrefix) && !repeated.contains(key)
        }
    }

    /// The keys, lowercased, that more than one string of `txtRecord` holds.
    ///
    /// RFC 6763 §6.4 keeps the first occurrence of a repeated key, but which one came first is lost on the
    /// way here: Avahi's compatibility layer hands the strings of a TXT record over in reverse order (a
    /// record sent as `pc.id=bad`, `pc.id=<uuid>` arrives with the UUID first). So a repeated key is not
    /// read at all, whichever occurrence would be chosen.
    private static func repeatedKeys(in txtRecord: [UInt8]) -> Set<String> {
        var seen = Set<String>()
        var repeated = Set<String>()
        var index = 0
        while index < txtRecord.count {
            let end = index + 1 + Int(txtRecord[index])
            guard end <= txtRecord.count else { break }  // truncated: where the decoder stops too
            let key = String(decoding: txtRecord[(index + 1)..<end].prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
            if !key.isEmpty, !seen.insert(key.lowercased()).inserted {
                repeated.insert(key.lowercased())
            }
            index = end
        }
        return repeated
    }

    init(peer: PeerID, discoveryInfo: [String: String]) {
        self.peer = peer
        self.discoveryInfo = discoveryInfo
    }
}
