import Foundation

/// A small JSON document that travels as a session message, after a prefix that tells it apart
/// from the test's own payloads (the reflector's hello, a stream receipt, a resource confirmation).
public protocol PrefixedMessage: Codable {
    /// The bytes every such message starts with.
    static var prefix: Data { get }
}

extension PrefixedMessage {
    /// The message: ``prefix`` and the JSON, with sorted keys.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Self.prefix + ((try? encoder.encode(self)) ?? Data())
    }

    /// The document in `message`, or nil when the message is not one of these.
    ///
    /// - Parameter message: a message from the reflector.
    /// - Returns: the document, or nil.
    public static func decoded(from message: Data) -> Self? {
        guard message.begins(with: prefix) else { return nil }
        return try? JSONDecoder().decode(Self.self, from: message.dropFirst(prefix.count))
    }
}
