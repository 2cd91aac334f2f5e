import Foundation

/// The identity of one peer: a display name people read and a unique id the library compares.
///
/// Two `PeerID`s made with the same display name are different peers. Equality and hashing use the
/// unique id alone. A `PeerID` is `Codable`, so an app can persist its own identity and present the
/// same peer across restarts:
///
/// ```swift
/// let data = try JSONEncoder().encode(myPeer)
/// let restored = try JSONDecoder().decode(PeerID.self, from: data)   // restored == myPeer
/// ```
public struct PeerID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The unique id of this peer, fixed when the `PeerID` is made.
    public let id: UUID

    /// The name shown to people: 1 to 63 bytes of UTF-8.
    public let displayName: String

    /// The largest display name, in bytes of UTF-8 (the limit of one DNS label, as MPC's).
    public static let maximumDisplayNameLength = 63

    /// Makes a new peer identity with a fresh unique id.
    ///
    /// - Parameter displayName: the name shown to other peers, 1 to 63 bytes of UTF-8.
    /// - Throws: ``PeerIDError`` when the name is empty, longer than 63 bytes, or contains a NUL.
    public init(displayName: String) throws(PeerIDError) {
        try self.init(id: UUID(), displayName: displayName)
    }

    /// Makes a peer identity from parts already known, as read from the network or from storage.
    ///
    /// - Parameters:
    ///   - id: the unique id.
    ///   - displayName: the display name, 1 to 63 bytes of UTF-8.
    /// - Throws: ``PeerIDError`` when the name is not valid.
    public init(id: UUID, displayName: String) throws(PeerIDError) {
        try Self.validate(displayName: displayName)
        self.id = id
        self.displayName = displayName
    }

    /// Checks a display name against the rules of ``init(displayName:)``.
    ///
    /// - Parameter displayName: the name to check.
    /// - Throws: ``PeerIDError`` naming what is wrong.
    public static func validate(displayName: String) throws(PeerIDError) {
        let length = displayName.utf8.count
        if length == 0 { throw .emptyDisplayName }
        if length > maximumDisplayNameLength { throw .displayNameTooLong(length) }
        if displayName.utf8.contains(0) { throw .displayNameContainsNUL }
    }

    /// Decodes a persisted identity, checking the display name as ``init(id:displayName:)`` does.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: a `DecodingError` for missing fields, or ``PeerIDError`` for an invalid name.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(UUID.self, forKey: .id)
        let name = try container.decode(String.self, forKey: .displayName)
        try self.init(id: id, displayName: name)
    }

    /// Two `PeerID`s are equal when their unique ids are equal.
    public static func == (lhs: PeerID, rhs: PeerID) -> Bool {
        lhs.id == rhs.id
    }

    /// Hashes the unique id.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }

    /// The display name and the first eight characters of the id, as "alice (1a2b3c4d)": one line, with
    /// any control character in the name escaped (a peer chooses its name; this is what logs show).
    public var description: String {
        "\(LogSafe.escaped(displayName)) (\(id.uuidString.prefix(8).lowercased()))"
    }
}
