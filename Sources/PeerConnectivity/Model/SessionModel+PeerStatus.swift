extension SessionModel {
    /// Where a peer stands in the session, as the model shows it.
    public struct PeerStatus: Hashable, Sendable {
        /// Its state.
        public var state: PeerState
        /// Why it is `notConnected` (left, declined, timed out, lost), or `connecting` again because its
        /// link dropped and is being re-established (reconnection); `nil` while connected, while first
        /// connecting, and for a peer that was in the session before the model followed it.
        public var disconnectReason: DisconnectReason?
        /// How the connection is secured while connected: encrypted or not (a plain link is for all on
        /// the path to read), the TLS version and cipher suite, the pairing code; `nil` otherwise.
        public var security: PeerSecurityInfo?

        /// Makes a status.
        ///
        /// - Parameters:
        ///   - state: the peer's state.
        ///   - disconnectReason: why it is `notConnected`, or `connecting` again after its link dropped (reconnection).
        ///   - security: how the connection is secured, while connected.
        public init(state: PeerState, disconnectReason: DisconnectReason? = nil, security: PeerSecurityInfo? = nil) {
            self.state = state
            self.disconnectReason = disconnectReason
            self.security = security
        }
    }
}
