import NIOCore
import NIOPosix

/// A connection's figures as the kernel keeps them (Linux's `struct tcp_info`, read with `TCP_INFO`): its
/// round trip, congestion window, retransmissions and bytes. A field the running kernel does not fill reads
/// zero (the buffer is zeroed before the call), and is given as nil where zero cannot be a value.
package struct TCPLinkInfo: Sendable, Hashable {
    /// Smoothed round trip and its mean deviation, in microseconds (`tcpi_rtt`, `tcpi_rttvar`).
    package var roundTripMicroseconds: UInt32
    package var roundTripVariationMicroseconds: UInt32
    /// The least round trip seen, in microseconds (`tcpi_min_rtt`); nil when not filled.
    package var minimumRoundTripMicroseconds: UInt32?
    /// Segments sent again over the connection's life (`tcpi_total_retrans`).
    package var retransmittedSegments: UInt32
    /// The congestion window, in segments (`tcpi_snd_cwnd`), and the segment size (`tcpi_snd_mss`).
    package var congestionWindowSegments: UInt32
    package var segmentSize: UInt32
    /// Segments sent and not yet acknowledged (`tcpi_unacked`).
    package var unacknowledgedSegments: UInt32
    /// Bytes written and not yet sent (`tcpi_notsent_bytes`).
    package var notSentBytes: UInt32
    /// The most recent delivery rate, in bytes a second (`tcpi_delivery_rate`); nil when not filled.
    package var deliveryRateBytesPerSecond: UInt64?
    /// Bytes sent, retransmissions included (`tcpi_bytes_sent`), sent again (`tcpi_bytes_retrans`), and
    /// received (`tcpi_bytes_received`).
    package var bytesSent: UInt64
    package var bytesRetransmitted: UInt64
    package var bytesReceived: UInt64

    /// The figures of a `struct tcp_info` as the kernel wrote it.
    package init(_ raw: RawTCPInfo) {
        func read<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            withUnsafeBytes(of: raw.storage) { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        }
        // Offsets of linux/tcp.h's struct tcp_info (stable: the kernel only appends to it).
        roundTripMicroseconds = read(UInt32.self, at: 68)
        roundTripVariationMicroseconds = read(UInt32.self, at: 72)
        let minimum = read(UInt32.self, at: 148)
        minimumRoundTripMicroseconds = minimum == 0 || minimum == UInt32.max ? nil : minimum
        retransmittedSegments = read(UInt32.self, at: 100)
        congestionWindowSegments = read(UInt32.self, at: 80)
        segmentSize = read(UInt32.self, at: 16)
        unacknowledgedSegments = read(UInt32.self, at: 24)
        notSentBytes = read(UInt32.self, at: 144)
        let delivery = read(UInt64.self, at: 160)
        deliveryRateBytesPerSecond = delivery == 0 ? nil : delivery
        bytesSent = read(UInt64.self, at: 200)
        bytesRetransmitted = read(UInt64.self, at: 208)
        bytesReceived = read(UInt64.self, at: 128)
    }

    /// Reads the figures of `channel`'s socket, on its event loop.
    ///
    /// - Returns: nil where the system has no `TCP_INFO`, or the channel is no TCP socket (a test's in-process
    ///   pair) or is closed.
    package static func read(from channel: any Channel) async -> TCPLinkInfo? {
        (try? await channel.eventLoop.submit { readOnEventLoop(from: channel) }.get()) ?? nil
    }

    /// Reads the figures of `channel`'s socket now, from its event loop, where the socket answers at once.
    ///
    /// - Returns: nil where the system has no `TCP_INFO`, or the channel is no TCP socket or is closed.
    package static func readOnEventLoop(from channel: any Channel) -> TCPLinkInfo? {
        channel.eventLoop.preconditionInEventLoop()
        guard let name = Platform.tcpInfo, let provider = channel as? any SocketOptionProvider else { return nil }
        var info: TCPLinkInfo?
        let read: EventLoopFuture<RawTCPInfo> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel.tcp,
            name: NIOBSDSocket.Option(rawValue: name)
        )
        read.assumeIsolated().whenSuccess { info = TCPLinkInfo($0) }
        return info
    }
}
