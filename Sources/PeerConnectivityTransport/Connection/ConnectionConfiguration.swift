import Logging
import NIOCore
import PeerConnectivityCore

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
    /// How many channels (streams and resources) the peer may have open at once; more are refused.
    package var maximumIncomingChannels: Int
    /// Bytes of one channel's frames that may wait for the socket before its writer suspends.
    package var channelQueueLimit: Int
    /// The longest an invitee holds an invitation for the application, whatever the INVITE asks.
    package var maximumInvitationTimeout: TimeAmount
    /// Where connection events (and the reasons connections close) are logged.
    package var logger: Logger
    /// The warnings about peers that connections made with this configuration may write, shared by them.
    package var warnings: WarningBudget
    /// Encryption: preference, identity and certificate checks; `nil` never encrypts (preference none).
    package var security: ConnectionSecurity?
    /// Whether this side has seen a peer encrypted before (its key is pinned): a plain connection with
    /// it is refused as a downgrade, whatever the preferences say.
    package var encryptedBefore: @Sendable (PeerID) -> Bool
    /// The unsent bytes of each connection made with this configuration, as ``Connection/limitUnsentBytes(to:)``
    /// bounds them; nil keeps the kernel's, NIO's and ``channelQueueLimit``'s.
    package var notSentLowWatermark: Int?
    /// Whether channel frames also wait while the kernel holds ``notSentLowWatermark`` unsent
    /// (``UnsentBytesGate``); only a benchmark's load turns it off, to load a link as other bulk traffic does.
    package var gatesUnsentBytes = true
    /// The TCP congestion control of each connection made with this configuration (``TCPCongestionControl``);
    /// nil keeps the system's.
    package var congestionControl: String?
    /// The family of the addresses dialled; the others are not tried.
    package var dialFamily: AddressFamily = .any
    /// The local address dialled connections are bound to; nil lets the system choose.
    package var localAddress: String?
    /// How long the receive pool keeps ``blockReceivePool`` buffers after the peer's last resource or folder
    /// channel ends, for the next transfer to read into (``ConnectionHandler/sizeReceivePool()``); zero lets
    /// them go at once.
    package var receivePoolLinger: TimeAmount = ConnectionConfiguration.defaultReceivePoolLinger

    /// The default ``receivePoolLinger``: 2 seconds, long enough for an application's next file, sent
    /// when the last is done, to find the pool grown.
    package static let defaultReceivePoolLinger = TimeAmount.seconds(2)

    /// How the socket reads: adaptive, up to 256 KiB a read. NIO's default stops at 64 KiB, less than
    /// one 64 KiB CHUNK frame with its header, so every such frame was glued from two reads (a copy);
    /// reads of up to 1 MiB made a reader that falls behind hold more memory than its window, since its
    /// chunks are slices of the reads they came in.
    package static let receiveAllocator = AdaptiveRecvByteBufferAllocator(
        minimum: 1 << 10,
        initial: 1 << 16,
        maximum: 1 << 18
    )

    /// The receive buffers a connection's socket pools to read into again: NIO's default.
    package static let receivePool = 4

    /// The receive buffers it pools while the peer sends resources or folders: as many reads of up to
    /// 256 KiB (``receiveAllocator``) as make the 16 MiB that a receiver lets wait for its file queue by
    /// default (the session's resource window).
    package static let blockReceivePool = 64

    package init(
        maximumMessageLength: Int,
        handshakeTimeout: TimeAmount,
        keepaliveInterval: TimeAmount,
        livenessTimeout: TimeAmount,
        outboundHighWatermark: Int = 4 << 20,
        maximumIncomingChannels: Int = 256,
        channelQueueLimit: Int = 512 << 10,
        maximumInvitationTimeout: TimeAmount = ConnectionStateMachine.defaultMaximumInvitationTimeout,
        logger: Logger,
        security: ConnectionSecurity? = nil,
        encryptedBefore: @escaping @Sendable (PeerID) -> Bool = { _ in false }
    ) {
        self.encryptedBefore = encryptedBefore
        self.maximumInvitationTimeout = maximumInvitationTimeout
        self.security = security
        self.maximumIncomingChannels = maximumIncomingChannels
        self.channelQueueLimit = channelQueueLimit
        self.maximumMessageLength = maximumMessageLength
        self.handshakeTimeout = handshakeTimeout
        self.keepaliveInterval = keepaliveInterval
        self.livenessTimeout = livenessTimeout
        self.outboundHighWatermark = outboundHighWatermark
        self.logger = logger
        self.warnings = WarningBudget()
    }
}
