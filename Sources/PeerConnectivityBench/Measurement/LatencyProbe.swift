import Foundation

/// A latency probe of the responsiveness test: a small message the reflector echoes as it echoes any
/// other, told apart from the test's other messages by its prefix and carrying its sequence number.
enum LatencyProbe {
    /// What every probe starts with.
    static let prefix = Data("pc-bench-probe\n".utf8)
    /// A probe's bytes: the prefix and an 8-byte sequence number (big-endian).
    static let size = prefix.count + 8

    /// The probe with this sequence number.
    ///
    /// - Parameter sequence: the probe's number.
    /// - Returns: its bytes.
    static func encoded(_ sequence: UInt64) -> Data {
        var data = prefix
        withUnsafeBytes(of: sequence.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    /// The sequence number of a probe's echo; nil for any other message, or a probe of the wrong size.
    ///
    /// - Parameter data: a message from the reflector.
    /// - Returns: the sequence number.
    static func sequence(of data: Data) -> UInt64? {
        guard data.count == size, data.begins(with: prefix) else { return nil }
        return data.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
