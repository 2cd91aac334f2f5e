import Foundation

/// A runner's request, in the bulk test with `--reverse` or `--bidir`, that the reflector write one
/// stream to it: `bench-reverse-<index>`, the ``StreamPattern`` bytes of that index, for `milliseconds`.
public struct BulkRequest: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON.
    public static let prefix = Data("pc-bench-bulk?\n".utf8)
    /// The prefix of the streams the reflector writes; the index follows.
    public static let streamPrefix = "bench-reverse-"

    /// The message's format version.
    public var schemaVersion: Int
    /// The stream's index (its name's and its pattern's).
    public var index: Int
    /// How long the reflector writes, in milliseconds (at most a day).
    public var milliseconds: Int

    /// Makes a request.
    ///
    /// - Parameters:
    ///   - index: the stream's index.
    ///   - milliseconds: how long to write.
    public init(index: Int, milliseconds: Int) {
        schemaVersion = 1
        self.index = index
        self.milliseconds = milliseconds
    }
}
