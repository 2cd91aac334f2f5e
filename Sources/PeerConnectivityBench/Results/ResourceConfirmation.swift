import Foundation

/// What the reflector sends back, as a reliable message, for each resource it received: the resource's
/// name, and the size and SHA-256 of the file it got (computed by the reflector from the file on its
/// disk), or of the folder it got (its files, their bytes and the ``FolderDigest``), or why it got none.
/// What was received is deleted once confirmed.
public struct ResourceConfirmation: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON, so that a confirmation is never mistaken for anything else.
    public static let prefix = Data("pc-bench-resource\n".utf8)

    /// The message's format version.
    public var schemaVersion: Int
    /// The resource's name, as the runner sent it.
    public var name: String
    /// The size of the file received, or the bytes of the folder's files, in bytes; nil when none was.
    public var size: Int?
    /// The SHA-256 of the file received, or the folder's ``FolderDigest``, 64 lowercase hexadecimal
    /// digits; nil when none was.
    public var sha256: String?
    /// A folder received: its regular files; nil for a file.
    public var files: Int?
    /// Why no file was received, or it could not be read.
    public var error: String?

    /// Makes a confirmation.
    ///
    /// - Parameters:
    ///   - name: the resource's name.
    ///   - size: the file's size.
    ///   - sha256: its SHA-256 in hexadecimal.
    ///   - error: why there is none.
    ///   - files: a folder's files.
    public init(name: String, size: Int?, sha256: String?, error: String? = nil, files: Int? = nil) {
        schemaVersion = 1
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.error = error
        self.files = files
    }

    /// Reads a confirmation message.
    ///
    /// - Parameter message: a message from the reflector.
    /// - Returns: nil when it is not a confirmation.
    public init?(decoding message: Data) {
        guard let decoded = Self.decoded(from: message) else { return nil }
        self = decoded
    }
}
