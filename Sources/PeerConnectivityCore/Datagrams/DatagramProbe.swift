import NIOCore

/// A probe of a UDP path, or its answer: the body of a datagram sent under a **probe token**
/// (docs/PROTOCOL.md, "Unreliable messages").
///
/// A side probes only a peer whose handshake said it probes too (``HandshakeFields/probesDatagrams``).
/// A probe goes to the peer's datagram endpoint under the complement of the peer's token (``token(for:)``),
/// sealed like a message on an encrypted connection; the peer answers it to the address it came from,
/// under the same token and sealed with the same key, so that only the two ends of the connection can
/// make either. A message's datagram carries the token itself, so a receiver tells the two apart by
/// the token alone.
///
/// Body: kind UInt8 (1 probe, 2 answer) · sequence UInt32 (the probe's, from 1).
package enum DatagramProbe: Sendable, Hashable {
    /// A probe: answer it.
    case probe(sequence: UInt32)
    /// The answer to the probe with this sequence number.
    case answer(sequence: UInt32)

    /// The bytes of a body.
    package static let length = 5

    /// The token a probe to the holder of `token` (and its answer) travels under: its complement.
    ///
    /// - Parameter token: the token the probed side gave in its DATAGRAM-ENDPOINT.
    package static func token(for token: UInt64) -> UInt64 {
        ~token
    }

    /// The body's bytes.
    package var bytes: [UInt8] {
        let (kind, sequence): (UInt8, UInt32)
        switch self {
        case .probe(let number): (kind, sequence) = (1, number)
        case .answer(let number): (kind, sequence) = (2, number)
        }
        return [kind] + withUnsafeBytes(of: sequence.bigEndian) { Array($0) }
    }

    /// Reads a body.
    ///
    /// - Parameter bytes: the datagram after its token (opened, on an encrypted connection).
    /// - Returns: the probe or answer; nil when the bytes are not one (the datagram is then dropped).
    package init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == Self.length, let kind = bytes.first else { return nil }
        let sequence = bytes.dropFirst().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard sequence >= 1 else { return nil }
        switch kind {
        case 1: self = .probe(sequence: sequence)
        case 2: self = .answer(sequence: sequence)
        default: return nil
        }
    }
}
