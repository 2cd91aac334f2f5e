import Logging
import NIOCore
import NIOPosix
import PeerConnectivityCore

/// A socket's TCP congestion control (Linux's `TCP_CONGESTION`), set by name and read back as the kernel
/// runs it. A name the kernel does not offer leaves the socket with the system's, and a warning logged: the
/// link works either way, and the read-back says which one runs.
package enum TCPCongestionControl {
    /// The longest name the kernel takes (`TCP_CA_NAME_MAX`, less its terminating zero).
    package static let maximumNameLength = 15

    /// The option's value as the kernel reads and writes it: a name, zero-padded to 16 bytes.
    struct RawName {
        var bytes: (UInt64, UInt64) = (0, 0)

        /// The first ``maximumNameLength`` bytes of `name`.
        init(_ name: String) {
            withUnsafeMutableBytes(of: &bytes) { storage in
                for (index, byte) in name.utf8.prefix(TCPCongestionControl.maximumNameLength).enumerated() {
                    storage[index] = byte
                }
            }
        }

        /// The name, up to its first zero byte.
        var name: String {
            withUnsafeBytes(of: bytes) { storage in
                String(decoding: storage.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
    }

    /// Sets `channel`'s congestion control; logs a warning when the kernel refuses the name (not offered,
    /// or not allowed to this process) or the channel is no TCP socket.
    ///
    /// - Parameters:
    ///   - name: the congestion control's name, such as `cubic` or `bbr`.
    ///   - channel: a connection's channel.
    ///   - logger: where a refusal is told.
    package static func set(_ name: String, on channel: any Channel, logger: Logger) {
        let shown = LogSafe.escaped(name, limit: 40)
        guard let option = Platform.tcpCongestion, let provider = channel as? any SocketOptionProvider else {
            logger.warning("congestion control \(shown) not set: this system sets none per socket")
            return
        }
        // The kernel reads at most 15 bytes: a longer name must not become another by losing its end.
        guard (1...maximumNameLength).contains(name.utf8.count) else {
            logger.warning("congestion control not set: a name has 1 to \(maximumNameLength) bytes")
            return
        }
        provider.unsafeSetSocketOption(
            level: NIOBSDSocket.OptionLevel.tcp,
            name: NIOBSDSocket.Option(rawValue: option),
            value: RawName(name)
        ).whenFailure { error in
            logger.warning(
                "congestion control \(shown) not set, the system's runs: \(error) (see /proc/sys/net/ipv4/tcp_available_congestion_control and tcp_allowed_congestion_control)"
            )
        }
    }

    /// The congestion control `channel`'s socket runs, read on its event loop.
    ///
    /// - Parameter channel: a connection's channel.
    /// - Returns: its name; nil where the system does not tell, or the channel is no TCP socket or is closed.
    package static func read(from channel: any Channel) async -> String? {
        guard let option = Platform.tcpCongestion, let provider = channel as? any SocketOptionProvider else {
            return nil
        }
        let raw: RawName? = try? await provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel.tcp,
            name: NIOBSDSocket.Option(rawValue: option)
        ).get()
        return raw.map(\.name).flatMap { $0.isEmpty ? nil : $0 }
    }
}
