/// A typed message that does not decode as the type it names, from ``Session/Messages``.
///
/// It names the peer that sent it and the type, and says what did not fit: a peer that runs another
/// version of the type, or that misbehaves. The sequence goes on after it (see ``Session/Messages``).
public struct MessageDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case undecodable
    }

    private let code: Code

    /// The peer that sent the message.
    public let peer: PeerID

    /// The name the message's type travels under (`String(describing:)` of the type).
    public let typeName: String

    /// What the decoder said.
    public let detail: String

    private init(_ code: Code, peer: PeerID, typeName: String, detail: String) {
        self.code = code
        self.peer = peer
        self.typeName = typeName
        self.detail = detail
    }

    /// A message tagged with the type's name does not decode as the type.
    ///
    /// - Parameters:
    ///   - typeName: the type's name.
    ///   - peer: the peer that sent it.
    ///   - detail: what the decoder said.
    public static func undecodable(_ typeName: String, from peer: PeerID, detail: String = "") -> MessageDecodingError {
        MessageDecodingError(.undecodable, peer: peer, typeName: typeName, detail: detail)
    }

    /// Errors are equal when they are of the same kind, type and peer.
    public static func == (lhs: MessageDecodingError, rhs: MessageDecodingError) -> Bool {
        lhs.code == rhs.code && lhs.peer == rhs.peer && lhs.typeName == rhs.typeName
    }

    /// Hashes the kind, the type and the peer.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(peer)
        hasher.combine(typeName)
    }

    /// A sentence saying what failed.
    public var description: String {
        switch code {
        case .undecodable:
            return "a message from \(peer) does not decode as \(typeName)\(detail.isEmpty ? "" : ": \(detail)")"
        }
    }
}
