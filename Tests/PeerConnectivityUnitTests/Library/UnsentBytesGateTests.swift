import NIOCore
import PeerConnectivityTransport
import Testing

/// The gate that holds channel frames back while the kernel holds a connection's low watermark unsent: how
/// much it lets through, and how long it waits, from the kernel's figures alone.
@Suite("The unsent bytes' gate")
struct UnsentBytesGateTests {
    private let gate = UnsentBytesGate(lowWatermark: 4_096)

    @Test("under the low watermark, channel frames may fill the rest of it")
    func room() {
        #expect(gate.decide(notSentBytes: 0, deliveryRate: nil) == .write(upTo: 4_096))
        #expect(gate.decide(notSentBytes: 1_000, deliveryRate: 312_500) == .write(upTo: 3_096))
        #expect(gate.decide(notSentBytes: 4_095, deliveryRate: nil) == .write(upTo: 1))
    }

    @Test("at or over it, they wait about until the kernel has sent down to half of it")
    func waits() {
        // 2.5 Mbit/s: 312,500 bytes a second; 20,480 - 2,048 bytes take 58.98 ms, past the longest wait.
        #expect(gate.decide(notSentBytes: 20_480, deliveryRate: 312_500) == .wait(.milliseconds(20)))
        // 4,096 - 2,048 bytes at 312,500 bytes a second: 6.5536 ms.
        #expect(gate.decide(notSentBytes: 4_096, deliveryRate: 312_500) == .wait(.nanoseconds(6_553_600)))
        // A fast link: the shortest wait, not a busy loop.
        #expect(gate.decide(notSentBytes: 8_192, deliveryRate: 4_000_000_000) == .wait(.microseconds(100)))
        // No rate yet: a millisecond.
        #expect(gate.decide(notSentBytes: 8_192, deliveryRate: nil) == .wait(.milliseconds(1)))
        #expect(gate.decide(notSentBytes: 8_192, deliveryRate: 0) == .wait(.milliseconds(1)))
    }

    @Test("a huge count of unsent bytes does not overflow the wait")
    func huge() {
        #expect(gate.decide(notSentBytes: .max, deliveryRate: 1) == .wait(.milliseconds(20)))
        #expect(UnsentBytesGate(lowWatermark: 0).lowWatermark == 1)
    }
}
