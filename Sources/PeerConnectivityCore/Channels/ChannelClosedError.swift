/// A channel (stream or resource) ended before the operation could complete.
package struct ChannelClosedError: Error, Hashable, CustomStringConvertible {
    /// Why the channel ended.
    package enum Cause: Hashable, Sendable {
        /// One side sent RESET with this code.
        case reset(ChannelResetCode, byPeer: Bool)
        /// The connection closed, for this reason.
        case connectionClosed(DisconnectReason)
    }

    /// The channel.
    package var channel: UInt32
    /// Why it ended.
    package var cause: Cause

    package init(channel: UInt32, cause: Cause) {
        self.channel = channel
        self.cause = cause
    }

    package var description: String {
        switch cause {
        case .reset(let code, let byPeer):
            return "channel \(channel) \(byPeer ? "reset by the peer" : "reset"): \(code)"
        case .connectionClosed(let reason): return "channel \(channel) ended with its connection: \(reason)"
        }
    }
}
