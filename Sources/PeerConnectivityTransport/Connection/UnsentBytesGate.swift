import NIOCore

/// Decides how many bytes of channel frames a connection with a low watermark may hand to its socket now,
/// from the bytes the kernel holds unsent (`tcpi_notsent_bytes`).
///
/// `TCP_NOTSENT_LOWAT` alone does not bound them: it decides when the socket reports writable, but a write
/// that fits in the last queued segment (up to the device's 64 KiB) is taken whatever waits. On a slow link
/// that is a quarter of a second and more ahead of every message sent behind a transfer. Channel frames wait
/// while the kernel holds the low watermark; messages and control frames never do.
package struct UnsentBytesGate: Sendable, Hashable {
    /// What the connection may do now.
    package enum Decision: Sendable, Hashable {
        /// Write channel frames until about this many bytes have gone (the frame that crosses it goes whole).
        case write(upTo: Int)
        /// Write none, and look again after this long: about when the kernel has sent half its unsent bytes.
        case wait(TimeAmount)
    }

    /// The bytes the kernel may hold unsent before channel frames wait.
    package let lowWatermark: Int

    /// The shortest wait: shorter looks cost more system calls than they save on a fast link.
    static let shortestWait = TimeAmount.microseconds(100)
    /// The longest wait: how late a link that stalled and came back is noticed.
    static let longestWait = TimeAmount.milliseconds(20)
    /// The wait when the kernel gives no delivery rate yet.
    static let waitWithoutRate = TimeAmount.milliseconds(1)

    /// A gate at `lowWatermark` bytes.
    ///
    /// - Parameter lowWatermark: the bytes, 1 at least.
    package init(lowWatermark: Int) {
        self.lowWatermark = max(1, lowWatermark)
    }

    /// The decision for the kernel's figures now.
    ///
    /// - Parameters:
    ///   - notSentBytes: the bytes the kernel holds unsent.
    ///   - deliveryRate: its latest delivery rate, in bytes a second; nil when it has none.
    /// - Returns: how much may be written, or how long to wait.
    package func decide(notSentBytes: Int, deliveryRate: UInt64?) -> Decision {
        if notSentBytes < lowWatermark {
            return .write(upTo: lowWatermark - notSentBytes)
        }
        guard let deliveryRate, deliveryRate > 0 else { return .wait(Self.waitWithoutRate) }
        let excess = UInt64(notSentBytes - lowWatermark / 2)
        let (nanoseconds, overflow) = excess.multipliedReportingOverflow(by: 1_000_000_000)
        let wait = overflow ? Self.longestWait : .nanoseconds(Int64(clamping: nanoseconds / deliveryRate))
        return .wait(min(max(wait, Self.shortestWait), Self.longestWait))
    }
}
