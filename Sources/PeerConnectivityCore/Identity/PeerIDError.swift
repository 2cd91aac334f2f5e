/// Why a display name cannot make a ``PeerID``.
public struct PeerIDError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case emptyDisplayName
        case displayNameTooLong(Int)
        case displayNameContainsNUL
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The display name is empty.
    public static let emptyDisplayName = PeerIDError(.emptyDisplayName)

    /// The display name is longer than ``PeerID/maximumDisplayNameLength`` bytes of UTF-8.
    ///
    /// - Parameter length: the name's length in bytes.
    public static func displayNameTooLong(_ length: Int) -> PeerIDError {
        PeerIDError(.displayNameTooLong(length))
    }

    /// The display name contains a NUL character.
    public static let displayNameContainsNUL = PeerIDError(.displayNameContainsNUL)

    /// A sentence saying what is wrong with the name.
    public var description: String {
        switch code {
        case .emptyDisplayName:
            return "invalid display name: it is empty (1 to \(PeerID.maximumDisplayNameLength) bytes of UTF-8 needed)"
        case .displayNameTooLong(let length):
            return "invalid display name: \(length) bytes of UTF-8, at most \(PeerID.maximumDisplayNameLength) allowed"
        case .displayNameContainsNUL:
            return "invalid display name: it contains a NUL character"
        }
    }
}
