/// Whether a side encrypts its connections, with the meaning of MPC's `MCEncryptionPreference`.
///
/// A connection is encrypted (TLS 1.3, mutual authentication) when both sides allow it: `.required`
/// or `.optional` on both. `.optional` against `.none` gives a plain connection. `.required` against
/// `.none` is refused on both sides with ``DisconnectReason/encryptionRequired``, whose detail says
/// which side insists.
///
/// The default is ``required``, as MPC's. The preferences travel in the plain HELLO, so anyone on the
/// path can rewrite a HELLO to say `.none`: with `.optional` on a side, that gives a plain connection
/// (a warning in the log says so), unless this side has seen the peer encrypted before
/// (``DisconnectReason/downgradeRefused``). Only `.required` cannot be downgraded.
public enum EncryptionPreference: UInt8, Sendable, Hashable, Codable, CaseIterable, LosslessStringConvertible {
    /// Never encrypt: a peer that requires encryption is refused.
    case none = 0
    /// Encrypt when the peer allows it, else connect in the clear.
    case optional = 1
    /// Always encrypt: a peer that refuses encryption is refused.
    case required = 2

    /// What sessions and advertisers use unless told otherwise: ``required``.
    public static let `default` = EncryptionPreference.required

    /// The preference's name, as in code.
    public var description: String {
        switch self {
        case .none: return "none"
        case .optional: return "optional"
        case .required: return "required"
        }
    }

    /// The preference named "none", "optional" or "required" (as in code), for command lines.
    ///
    /// - Parameter description: the name.
    public init?(_ description: String) {
        guard let preference = Self.allCases.first(where: { $0.description == description }) else { return nil }
        self = preference
    }

    /// What two sides' preferences give.
    package enum Outcome: Equatable, Sendable {
        /// Both allow encryption: the connection switches to TLS.
        case encrypted
        /// One side refuses encryption and neither requires it.
        case plain
        /// One side requires what the other refuses; `detail` says which, seen from this side.
        case refused(detail: String)
    }

    /// Negotiates this side's preference with the peer's, the same way on both sides.
    ///
    /// - Parameter peer: the preference the peer sent in its HELLO.
    /// - Returns: encrypted, plain, or refused.
    package func negotiate(with peer: EncryptionPreference) -> Outcome {
        switch (self, peer) {
        case (.none, .required):
            return .refused(detail: "the peer requires encryption and this side's preference is none")
        case (.required, .none):
            return .refused(detail: "this side requires encryption and the peer's preference is none")
        case (.none, _), (_, .none):
            return .plain
        default:
            return .encrypted
        }
    }
}
