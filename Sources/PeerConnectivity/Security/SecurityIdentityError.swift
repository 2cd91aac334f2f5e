/// Why a ``SecurityIdentity`` could not be loaded, saved or made.
public struct SecurityIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case unreadable
        case corrupt
        case unwritable
        case invalid
    }

    private let code: Code
    /// The file concerned, when there is one.
    public let path: String?
    /// What went wrong, for logs and people.
    public let detail: String

    private init(_ code: Code, path: String?, detail: String) {
        self.code = code
        self.path = path
        self.detail = detail
    }

    /// The file could not be read (missing, no permission).
    static func unreadable(_ path: String, _ detail: String) -> SecurityIdentityError {
        SecurityIdentityError(.unreadable, path: path, detail: detail)
    }
    /// The file was read but is not a valid identity.
    static func corrupt(_ path: String, _ detail: String) -> SecurityIdentityError {
        SecurityIdentityError(.corrupt, path: path, detail: detail)
    }
    /// The file could not be written.
    static func unwritable(_ path: String, _ detail: String) -> SecurityIdentityError {
        SecurityIdentityError(.unwritable, path: path, detail: detail)
    }
    /// The parts of an identity do not fit together (key, certificate, id).
    static func invalid(_ detail: String) -> SecurityIdentityError {
        SecurityIdentityError(.invalid, path: nil, detail: detail)
    }

    /// The identity file could not be read.
    public static let unreadableKind = SecurityIdentityError(.unreadable, path: nil, detail: "")
    /// The identity file is not a valid identity.
    public static let corruptKind = SecurityIdentityError(.corrupt, path: nil, detail: "")
    /// The identity file could not be written.
    public static let unwritableKind = SecurityIdentityError(.unwritable, path: nil, detail: "")
    /// The parts of an identity do not fit together.
    public static let invalidKind = SecurityIdentityError(.invalid, path: nil, detail: "")

    /// Errors are equal when they are of the same kind, whatever their path and detail.
    public static func == (lhs: SecurityIdentityError, rhs: SecurityIdentityError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the kind of error.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// A sentence saying what failed.
    public var description: String {
        let file = path.map { " \($0)" } ?? ""
        switch code {
        case .unreadable: return "cannot read the identity file\(file): \(detail)"
        case .corrupt: return "the identity file\(file) is not a valid identity: \(detail)"
        case .unwritable: return "cannot write the identity file\(file): \(detail)"
        case .invalid: return "invalid identity: \(detail)"
        }
    }
}
