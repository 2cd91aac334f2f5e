import Logging
import NIOCore

/// Settings of one connection, filled in by the public API from its configurations.
package struct ConnectionConfiguration: Sendable {
    /// The largest data message accepted; frames above it close the connection.
    package var maximumMessageLength: Int
    /// How long an invitee waits for HELLO and INVITE.
    package var handshakeTimeout: TimeAmount
    /// How often a KEEPALIVE is sent once connected.
    package var keepaliveInterval: TimeAmount
    /// How long without a frame from the peer before it counts as gone.
    package var livenessTimeout: TimeAmount
    /// Queued outbound bytes above which `send` suspends until the socket drains.
    package var outboundHighWatermark: Int
    /// Where connection events (and the reasons connections close) are logged.
    package var logger: Logger

    package init(
        maximumMessageLength: Int,
        handshakeTimeout: TimeAmount,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        outboundHighWatermark: Int = 4 << 20,
        logger: Logger
    ) {
        self.maximumMessageLength = maximumMessageLength
        self.handshakeTimeout = handshakeTimeout
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
        self.outboundHighWatermark = outboundHighWatermark
        self.logger = logger
    }
}
