/// What a channel carries (the OPEN frame's kind byte).
package enum ChannelKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A named byte stream of unknown length (`Session.startStream`).
    case stream = 1
    /// A file of known length, sent in blocks each checked with SHA-256, and a root over them at the end
    /// (`Session.sendResource`).
    case resource = 2
    /// A reliable message larger than ``WireProtocol/inlineMessageLimit`` (`Session.send`): its size is
    /// known at OPEN, its bytes come in CHUNKs, and the receiver delivers it whole at END.
    case message = 3

    package var description: String {
        switch self {
        case .stream: return "stream"
        case .resource: return "resource"
        case .message: return "message"
        }
    }
}
