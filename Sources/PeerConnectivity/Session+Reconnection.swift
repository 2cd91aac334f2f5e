extension Session {
    /// How a session re-establishes a link that dropped (``Configuration/reconnection``).
    ///
    /// When the connection to a connected peer closes without a goodbye (`DisconnectReason.connectionLost`
    /// or `DisconnectReason.livenessTimeout`), the peer goes `connecting` (with that reason) instead of
    /// `notConnected`. Of the two peers, the one with the lower peer id dials the other's session listener,
    /// with exponential backoff and jitter, and resumes the link with a secret the two exchanged when it was
    /// established; the peer goes `connected` again. Reliable messages are numbered and acknowledged, so
    /// each one sent around the drop arrives exactly once, in order. If the link is not back within
    /// ``window``, the peer goes `notConnected` with `DisconnectReason.reconnectionFailed`, whose
    /// `DisconnectReason.unconfirmedMessages` counts the messages that failed (sent but never confirmed
    /// by the peer), and `send`s waiting for room throw ``SessionError/peerNotConnected(_:reason:)``.
    /// Both sides need reconnection on; with a peer that has it off, the link behaves as without it. A link
    /// is resumable once each side has the other's secret, the first frame after the handshake (a drop in
    /// the first round trip is reported as without reconnection). Streams and resources open at the drop
    /// fail with their usual errors; unreliable sends to a peer that is reconnecting throw
    /// ``SessionError/peerNotConnected(_:reason:)``, as to any peer not connected.
    public struct Reconnection: Sendable {
        /// How long after the drop the session keeps trying before the peer counts as gone.
        public var window: Duration = .seconds(30)
        /// The wait before the second attempt; it doubles after each failed attempt (each wait is
        /// taken at random between half and all of it).
        public var initialBackoff: Duration = .milliseconds(200)
        /// The longest wait between two attempts.
        public var maximumBackoff: Duration = .seconds(4)
        /// Bytes of reliable messages kept per peer until the peer confirms them (the retransmit
        /// buffer); `send` to a peer whose buffer is full suspends until confirmations free room.
        public var retainedBytesLimit: Int = 8 << 20
        /// How long one attempt to resume (connect and handshake) may take before the next begins. A test of exact
        /// state sequences sets a long one: on a machine too loaded to finish an attempt in time, an abandoned attempt
        /// that the other side had already taken shows there as one more drop.
        package var attemptTimeout: Duration = .seconds(5)

        /// The defaults: a 30 s window, backoff from 200 ms to 4 s, 8 MiB kept per peer.
        public static var `default`: Reconnection { Reconnection() }

        /// Makes the default reconnection settings; change its properties as needed.
        public init() {}
    }
}
