/// Room for Linux's `struct tcp_info` up to `tcpi_snd_wnd` (232 bytes), which getsockopt fills as far as the
/// kernel's own is long.
package struct RawTCPInfo: Sendable {
    // 29 × 8 bytes.
    var storage:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64, UInt64
        ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// Zeroes, as getsockopt finds them.
    package init() {}

    /// The bytes, for tests: at most 232 are taken.
    package init(bytes: [UInt8]) {
        withUnsafeMutableBytes(of: &storage) { buffer in
            for (index, byte) in bytes.prefix(buffer.count).enumerated() { buffer[index] = byte }
        }
    }
}
