/// How ``Session/send(_:toPeers:mode:)`` delivers a message.
public struct SendMode: Hashable, Sendable, CustomStringConvertible {
    private enum Mode: Hashable, Sendable {
        case reliable
    }

    private let mode: Mode

    /// In order, nothing lost or duplicated while the peer stays connected; when the connection
    /// fails the peer is reported `notConnected` and further sends to it throw.
    public static let reliable = SendMode(mode: .reliable)

    /// "reliable".
    public var description: String {
        switch mode {
        case .reliable: return "reliable"
        }
    }
}
