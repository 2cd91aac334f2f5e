/// Why attributes could not be encoded as a DNS-SD TXT record.
///
/// Thrown by ``TXTRecord/encode(_:)``. Compare against the static members, e.g.
/// `error == .entryTooLong(key: "name")`.
package struct TXTRecordError: Error, Hashable, CustomStringConvertible {
    /// The kinds of error; private so that adding one is not a breaking change.
    private enum Code: Hashable {
        case emptyKey
        case keyContainsEquals(key: String)
        case invalidKeyCharacter(key: String)
        case duplicateKey(key: String)
        case entryTooLong(key: String)
        case recordTooLong
    }

    /// The kind of error and the key it is about.
    private let code: Code

    /// Creates an error of the given kind.
    ///
    /// - Parameter code: The kind of error.
    private init(_ code: Code) {
        self.code = code
    }

    /// A key is the empty string; RFC 6763 §6.4 requires at least one character.
    package static let emptyKey = TXTRecordError(.emptyKey)

    /// The whole record is longer than ``TXTRecord/maximumRecordLength`` bytes.
    package static let recordTooLong = TXTRecordError(.recordTooLong)

    /// A key holds `=`, which would end the key early when decoded.
    ///
    /// - Parameter key: The offending key.
    /// - Returns: The error.
    package static func keyContainsEquals(key: String) -> TXTRecordError {
        TXTRecordError(.keyContainsEquals(key: key))
    }

    /// A key holds a character that is not printable US-ASCII (0x20-0x7E).
    ///
    /// - Parameter key: The offending key.
    /// - Returns: The error.
    package static func invalidKeyCharacter(key: String) -> TXTRecordError {
        TXTRecordError(.invalidKeyCharacter(key: key))
    }

    /// Two keys differ only in letter case; TXT record keys are case-insensitive, so a reader would keep only one.
    ///
    /// - Parameter key: The second of the clashing keys in sorted order.
    /// - Returns: The error.
    package static func duplicateKey(key: String) -> TXTRecordError {
        TXTRecordError(.duplicateKey(key: key))
    }

    /// The `key=value` entry is longer than ``TXTRecord/maximumEntryLength`` bytes.
    ///
    /// - Parameter key: The key of the entry that is too long.
    /// - Returns: The error.
    package static func entryTooLong(key: String) -> TXTRecordError {
        TXTRecordError(.entryTooLong(key: key))
    }

    /// The key this error is about, or `nil` when it is about no single key.
    package var key: String? {
        switch self.code {
        case .keyContainsEquals(let key), .invalidKeyCharacter(let key), .duplicateKey(let key),
            .entryTooLong(let key):
            return key
        case .emptyKey, .recordTooLong:
            return nil
        }
    }

    /// What is wrong, naming the key.
    package var description: String {
        switch self.code {
        case .emptyKey:
            return "TXT record key is empty; keys need at least one character"
        case .keyContainsEquals(let key):
            return "TXT record key \"\(key)\" contains '='"
        case .invalidKeyCharacter(let key):
            return "TXT record key \"\(key)\" contains a character that is not printable US-ASCII (0x20-0x7E)"
        case .duplicateKey(let key):
            return "TXT record key \"\(key)\" clashes with another key that differs only in letter case"
        case .entryTooLong(let key):
            return
                "TXT record entry \"\(key)=...\" is longer than \(TXTRecord.maximumEntryLength) bytes; shorten its value"
        case .recordTooLong:
            return "TXT record is longer than \(TXTRecord.maximumRecordLength) bytes"
        }
    }
}
