import Foundation

/// What the reflector sends back, as a reliable message, at the end of each one-way stream
/// (`--one-way`): how many bytes it read, and whether each was the ``StreamPattern`` byte expected there.
public struct StreamReceipt: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON, so that a receipt is never mistaken for anything else.
    public static let prefix = Data("pc-bench-stream\n".utf8)

    /// The message's format version.
    public var schemaVersion: Int
    /// The stream's name.
    public var name: String
    /// The bytes the reflector read before the stream ended.
    public var bytes: Int
    /// The offset of the first byte that differed from the pattern, if one did.
    public var firstMismatchOffset: Int?
    /// Why the stream did not end normally.
    public var error: String?
    /// One-way streams: the bytes the reflector read in each second from the stream's first byte, as it saw
    /// them (iperf3's server output); nil from a reflector that does not count them.
    public var bytesPerSecond: [Int]?

    /// Makes a receipt.
    ///
    /// - Parameters:
    ///   - name: the stream's name.
    ///   - bytes: bytes read.
    ///   - firstMismatchOffset: where the first wrong byte was.
    ///   - error: why the stream failed.
    public init(name: String, bytes: Int, firstMismatchOffset: Int? = nil, error: String? = nil) {
        schemaVersion = 1
        self.name = name
        self.bytes = bytes
        self.firstMismatchOffset = firstMismatchOffset
        self.error = error
    }

    /// Reads a receipt message.
    ///
    /// - Parameter message: a message from the reflector.
    /// - Returns: nil when it is not a receipt.
    public init?(decoding message: Data) {
        guard let decoded = Self.decoded(from: message) else { return nil }
        self = decoded
    }
}
