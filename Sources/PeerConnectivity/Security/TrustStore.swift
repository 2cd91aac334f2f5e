import Foundation
import Synchronization

/// A trust-on-first-use store: the first key seen for a peer id is pinned (SHA-256 of its
/// SubjectPublicKeyInfo); a later connection from that id with another key is refused with
/// `DisconnectReason.certificateRejected` naming the peer.
///
/// Backed by a JSON file when made with a URL (written on every new pin, mode 0600), else in memory.
/// Use it with ``CertificatePolicy/trustOnFirstUse(_:)``; one store may serve several sessions.
public final class TrustStore: Sendable {
    private let url: URL?
    private let pins: Mutex<[UUID: String]>

    /// A store in memory only.
    public init() {
        self.url = nil
        self.pins = Mutex([:])
    }

    /// A store kept in a file: read now if it exists, written on every new pin.
    ///
    /// - Parameter url: the file.
    /// - Throws: ``SecurityIdentityError`` when the file exists but cannot be read or parsed.
    public init(url: URL) throws(SecurityIdentityError) {
        self.url = url
        var loaded: [UUID: String] = [:]
        if FileManager.default.fileExists(atPath: url.path) {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw .unreadable(url.path, "\(error.localizedDescription)")
            }
            do {
                loaded = try JSONDecoder().decode([UUID: String].self, from: data)
            } catch {
                throw .corrupt(url.path, "not a trust store: \(error)")
            }
        }
        self.pins = Mutex(loaded)
    }

    /// The pinned key fingerprint (SHA-256 of the SubjectPublicKeyInfo, hex) of a peer id, if any.
    ///
    /// - Parameter id: the peer id.
    /// - Returns: the fingerprint, lowercase hex.
    public func pinnedKey(for id: UUID) -> String? {
        pins.withLock { $0[id] }
    }

    /// Forgets a peer's key, so its next key is pinned anew (after the people checked why it changed).
    ///
    /// - Parameter id: the peer id.
    public func forget(_ id: UUID) {
        let snapshot = pins.withLock { pins in
            pins[id] = nil
            return pins
        }
        persist(snapshot)
    }

    /// Pins the key on first sight, or checks it against the pin.
    ///
    /// - Parameters:
    ///   - peer: the peer.
    ///   - fingerprint: SHA-256 of its SubjectPublicKeyInfo.
    /// - Returns: `nil` when trusted; the reason when the key differs from the pinned one.
    func check(_ peer: PeerID, fingerprint: [UInt8]) -> DisconnectReason? {
        let hex = fingerprint.map { String(format: "%02x", $0) }.joined()
        let (known, snapshot): (String?, [UUID: String]?) = pins.withLock { pins in
            if let known = pins[peer.id] { return (known, nil) }
            pins[peer.id] = hex
            return (nil, pins)
        }
        if let snapshot {
            persist(snapshot)
            return nil
        }
        if known == hex { return nil }
        return DisconnectReason.certificateRejected.with(
            detail: "the key of \(peer) changed: pinned \(known?.prefix(16) ?? "")…, presented \(hex.prefix(16))…"
        )
    }

    private func persist(_ snapshot: [UUID: String]) {
        guard let url, let data = try? JSONEncoder().encode(snapshot) else { return }
        _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        try? data.write(to: url)
    }
}
