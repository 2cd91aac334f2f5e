import PeerConnectivityTransport
import Testing

/// Reading Linux's `struct tcp_info` from the bytes getsockopt writes: each figure at its offset in
/// linux/tcp.h, and zero where the kernel leaves a field out.
@Suite("TCP_INFO's layout")
struct TCPLinkInfoTests {
    /// 232 bytes with `values` written little-endian at their offsets (this machine's order, as the kernel's).
    private func raw(_ values: [(offset: Int, bytes: Int, value: UInt64)]) -> RawTCPInfo {
        var bytes = [UInt8](repeating: 0, count: 232)
        for field in values {
            for index in 0..<field.bytes {
                bytes[field.offset + index] = UInt8(truncatingIfNeeded: field.value >> (8 * index))
            }
        }
        return RawTCPInfo(bytes: bytes)
    }

    @Test("each figure is read at its offset; a field the kernel did not fill is nil")
    func offsets() {
        let info = TCPLinkInfo(
            raw([
                (16, 4, 1_448), (24, 4, 12), (68, 4, 5_250), (72, 4, 800), (80, 4, 138), (100, 4, 3),
                (128, 8, 9_000_000_001), (144, 4, 16_384), (148, 4, 26), (160, 8, 2_500_000), (200, 8, 12_345_678_901),
                (208, 8, 760_848),
            ])
        )
        #expect(info.segmentSize == 1_448 && info.unacknowledgedSegments == 12)
        #expect(info.roundTripMicroseconds == 5_250 && info.roundTripVariationMicroseconds == 800)
        #expect(info.congestionWindowSegments == 138 && info.retransmittedSegments == 3)
        #expect(info.bytesReceived == 9_000_000_001 && info.notSentBytes == 16_384)
        #expect(info.minimumRoundTripMicroseconds == 26 && info.deliveryRateBytesPerSecond == 2_500_000)
        #expect(info.bytesSent == 12_345_678_901 && info.bytesRetransmitted == 760_848)
        // An older kernel's shorter struct: the fields after its end stay zero.
        let short = TCPLinkInfo(raw([(68, 4, 5_250)]))
        #expect(short.minimumRoundTripMicroseconds == nil && short.deliveryRateBytesPerSecond == nil)
        #expect(short.roundTripMicroseconds == 5_250 && short.bytesSent == 0)
    }
}
