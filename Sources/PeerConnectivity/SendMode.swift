/// How ``Session/send(_:toPeers:mode:)-(Data,_,_)`` delivers a message.
public struct SendMode: Hashable, Sendable, CustomStringConvertible {
    private enum Mode: Hashable, Sendable {
        case reliable
        case unreliable
    }

    private let mode: Mode

    /// In order, nothing lost or duplicated while the peer stays connected; when the connection
    /// fails the peer is reported `notConnected` and further sends to it throw.
    public static let reliable = SendMode(mode: .reliable)

    /// Best effort, as MPC's: a message may be lost, duplicated by the network or arrive out of
    /// order, and is dropped rather than queued when the network cannot take it now. It travels in
    /// one UDP datagram beside the connection, so it never waits behind reliable traffic, and at
    /// most 65,000 bytes (above about 1,400 bytes IP fragments it, and losing any fragment loses it).
    /// Until the peer's UDP endpoint is known (the first round trip after connecting) or when UDP is
    /// unavailable, it goes on the connection instead.
    public static let unreliable = SendMode(mode: .unreliable)

    /// "reliable" or "unreliable".
    public var description: String {
        switch mode {
        case .reliable: return "reliable"
        case .unreliable: return "unreliable"
        }
    }
}
