#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bytes of every test message, so that each echo can be checked byte for byte and named.
///
/// A message of `size` bytes starts with its sequence number (8 bytes, big-endian); the rest is a
/// pseudo-random byte sequence starting at an offset derived from the sequence number
/// (`sequence % 251`), so two messages differ and a swapped or shifted payload is caught. Writing and
/// checking are one `memcpy` / `memcmp` each from a table made once. A message under 8 bytes holds
/// only the low `size` bytes of its sequence number (no pattern); the runner finds the full number
/// among the messages in flight.
public struct PayloadPattern: Sendable {
    /// The bytes of the sequence number at the start of a payload.
    public static let sequenceBytes = 8
    /// The number of different pattern offsets (a prime, so offsets cycle slowly against powers of two).
    static let period = 251

    private let table: [UInt8]
    /// The largest payload this pattern writes and checks.
    public let maximumSize: Int

    /// Makes the pattern table for payloads of at most `maximumSize` bytes.
    ///
    /// - Parameter maximumSize: the largest message of the plan.
    public init(maximumSize: Int) {
        self.maximumSize = maximumSize
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = max(maximumSize - Self.sequenceBytes, 0) + Self.period
        table = (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// Fills `buffer` (the whole message) with the payload of message `sequence`.
    ///
    /// - Parameters:
    ///   - sequence: the message's sequence number.
    ///   - buffer: the message, `1...maximumSize` bytes.
    public func write(sequence: UInt64, into buffer: UnsafeMutableRawBufferPointer) {
        let size = buffer.count
        precondition(size <= maximumSize, "payload of \(size) bytes exceeds the pattern's \(maximumSize)")
        let width = min(size, Self.sequenceBytes)
        for index in 0..<width {
            buffer[index] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(width - 1 - index)))
        }
        guard size > Self.sequenceBytes else { return }
        let offset = Int(sequence % UInt64(Self.period))
        table.withUnsafeBytes { table in
            _ = memcpy(buffer.baseAddress! + Self.sequenceBytes, table.baseAddress! + offset, size - Self.sequenceBytes)
        }
    }

    /// Reads the sequence number of an echo and checks its bytes.
    ///
    /// - Parameters:
    ///   - bytes: the message as it came back.
    ///   - expectedSize: the size it was sent with.
    /// - Returns: its sequence number (or the low bytes of it), and whether every byte is as sent.
    public func inspect(_ bytes: UnsafeRawBufferPointer, expectedSize: Int) -> PayloadInspection {
        let width = min(expectedSize, Self.sequenceBytes)
        guard width > 0, bytes.count >= width else {
            return PayloadInspection(sequenceTag: 0, tagBytes: 0, isIntact: false)
        }
        var tag: UInt64 = 0
        for index in 0..<width {
            tag = tag << 8 | UInt64(bytes[index])
        }
        guard bytes.count == expectedSize else {
            return PayloadInspection(sequenceTag: tag, tagBytes: width, isIntact: false)
        }
        guard expectedSize > Self.sequenceBytes else {
            return PayloadInspection(sequenceTag: tag, tagBytes: width, isIntact: true)
        }
        let offset = Int(tag % UInt64(Self.period))
        let length = expectedSize - Self.sequenceBytes
        let intact =
            offset + length <= table.count
            && table.withUnsafeBytes { table in
                memcmp(bytes.baseAddress! + Self.sequenceBytes, table.baseAddress! + offset, length) == 0
            }
        return PayloadInspection(sequenceTag: tag, tagBytes: width, isIntact: intact)
    }
}
