/// What the receiving child saw of one stream or resource, once it ended.
struct TransferReport: Codable, Sendable {
    /// The stream's or resource's name, as sent.
    var name: String
    /// Bytes received: read from the stream, or the length of the resource's file.
    var bytes: Int
    /// Why it failed, if it did.
    var error: String?
}
