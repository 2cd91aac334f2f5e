/// What ``PayloadPattern/inspect(_:expectedSize:)`` read from one echo.
public struct PayloadInspection: Hashable, Sendable {
    /// The sequence number, or its low `tagBytes` bytes for messages under 8 bytes.
    public var sequenceTag: UInt64
    /// How many bytes of the sequence number the message carries: 8, fewer for tiny messages, 0 when
    /// the echo is too short to name any message.
    public var tagBytes: Int
    /// Whether the echo has the size it was sent with and every byte as sent.
    public var isIntact: Bool

    /// Makes an inspection result.
    ///
    /// - Parameters:
    ///   - sequenceTag: the sequence number or its low bytes.
    ///   - tagBytes: how many bytes of it the message carries.
    ///   - isIntact: whether size and bytes are as sent.
    public init(sequenceTag: UInt64, tagBytes: Int, isIntact: Bool) {
        self.sequenceTag = sequenceTag
        self.tagBytes = tagBytes
        self.isIntact = isIntact
    }
}
