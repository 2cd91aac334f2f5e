import NIOCore
import NIOPosix
import PeerConnectivityCore

/// The socket's options a session sets after the connection is made: how many bytes wait unsent, and which
/// congestion control runs.
extension Connection {
    /// Keeps at most about `lowWatermark` bytes unsent in the kernel (`TCP_NOTSENT_LOWAT`, and channel frames
    /// held back while it holds them: ``UnsentBytesGate``), in NIO (its write watermark) and queued on each
    /// channel, so that a message sent behind a transfer waits for the link's queue rather than the sender's
    /// buffers.
    ///
    /// - Parameters:
    ///   - lowWatermark: the bytes, ``minimumUnsentBytes`` at least.
    ///   - gated: whether channel frames wait while the kernel holds them (see
    ///     ``ConnectionConfiguration/gatesUnsentBytes``).
    package func limitUnsentBytes(to lowWatermark: Int, gated: Bool = true) async throws {
        let lowWatermark = max(Self.minimumUnsentBytes, lowWatermark)
        channelQueueLimitValue.store(min(channelQueueLimit, lowWatermark), ordering: .relaxed)
        let channel = self.channel
        let handler = self.handler
        try await channel.eventLoop.submit {
            try handler.value.limitUnsentBytes(of: channel, to: lowWatermark, gated: gated)
        }.get()
    }

    /// Runs the connection's TCP with the congestion control `name` (``TCPCongestionControl``): for a
    /// connection accepted with another configuration than the session's it joins.
    ///
    /// - Parameter name: the congestion control's name, such as `cubic`.
    package func setCongestionControl(_ name: String) async {
        let channel = self.channel
        let handler = self.handler
        try? await channel.eventLoop.submit {
            TCPCongestionControl.set(name, on: channel, logger: handler.value.logger)
        }.get()
    }

    /// The least ``limitUnsentBytes(to:)`` keeps: 4 KiB, about three segments, so that a stream's chunks stay
    /// whole pages.
    package static let minimumUnsentBytes = 4 << 10

    /// Sets the socket's and NIO's limits (``limitUnsentBytes(to:)``) from the channel's event loop.
    static func limitUnsentBytes(of channel: any Channel, to lowWatermark: Int) throws {
        guard let options = channel.syncOptions else { throw ChannelError.operationUnsupported }
        // A socket without the option (a socket pair, in process) keeps what it has.
        try? options.setOption(notSentLowWatermarkOption, value: SocketOptionValue(lowWatermark))
        try options.setOption(.writeBufferWaterMark, value: .init(low: lowWatermark / 2, high: lowWatermark))
    }

    /// `TCP_NOTSENT_LOWAT`: the kernel reports the socket writable only while fewer unsent bytes than its value
    /// wait.
    package static let notSentLowWatermarkOption = ChannelOptions.Types.SocketOption(
        level: .tcp,
        name: NIOBSDSocket.Option(rawValue: Platform.tcpNotSentLowWatermark)
    )
}
