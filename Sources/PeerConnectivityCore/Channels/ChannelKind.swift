/// What a channel carries (the OPEN frame's kind byte).
package enum ChannelKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A named byte stream of unknown length (`Session.startStream`).
    case stream = 1
    /// A file of known length, sent in blocks each checked with a block digest (XXH64 or XXH3-64), and a
    /// SHA-256 root over their digests at the end (`Session.sendResource`).
    case resource = 2
    /// A reliable message larger than ``WireProtocol/inlineMessageLimit`` (`Session.send`): its size is
    /// known at OPEN, its bytes come in CHUNKs, and the receiver delivers it whole at END.
    case message = 3
    /// A folder sent as one resource: its bytes are a folder stream (``FolderStreamParser``) of entries,
    /// each a header (path and length) and the file's bytes, cut into blocks and checked as a resource's
    /// are. Sent only to a peer whose handshake said it reads folders (``HandshakeFields/readsFolders``).
    case folder = 4

    /// Whether the channel's bytes come in checked blocks with a root at END (a resource or a folder).
    package var hasBlocks: Bool { self == .resource || self == .folder }

    package var description: String {
        switch self {
        case .stream: return "stream"
        case .resource: return "resource"
        case .message: return "message"
        case .folder: return "folder"
        }
    }
}
