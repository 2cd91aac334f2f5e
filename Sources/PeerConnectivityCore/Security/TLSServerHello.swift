/// Reads the cipher suite a TLS server chose from its ServerHello, the first record it sends.
///
/// NIOSSL reports the TLS version of a connection but not its cipher suite; the ServerHello carries it
/// in the clear, at a place fixed by RFC 8446 §4.1.3: record header (5 bytes), handshake header (4),
/// `legacy_version` (2), `random` (32), `legacy_session_id_echo` (a length byte and that many bytes),
/// then `cipher_suite` (2).
package enum TLSServerHello {
    /// What the bytes seen so far say.
    package enum Reading: Equatable, Sendable {
        /// Too few bytes yet.
        case needMoreBytes
        /// The server chose this cipher suite (its IANA number).
        case cipherSuite(UInt16)
        /// The bytes do not start with a ServerHello: stop looking.
        case notAServerHello
    }

    /// Reads the cipher suite from the first bytes a TLS server sends.
    ///
    /// - Parameter bytes: the server's first bytes, from the start of its first record.
    /// - Returns: the cipher suite, a need for more bytes, or that this is not a ServerHello.
    package static func read<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> Reading
    where Bytes.Element == UInt8, Bytes.Index == Int {
        func byte(_ offset: Int) -> UInt8? {
            offset < bytes.count ? bytes[bytes.startIndex + offset] : nil
        }
        guard let recordType = byte(0) else { return .needMoreBytes }
        guard recordType == 0x16 else { return .notAServerHello }  // handshake record
        guard let messageType = byte(5) else { return .needMoreBytes }
        guard messageType == 0x02 else { return .notAServerHello }  // ServerHello
        let sessionIDLengthOffset = 5 + 4 + 2 + 32
        guard let sessionIDLength = byte(sessionIDLengthOffset) else { return .needMoreBytes }
        guard sessionIDLength <= 32 else { return .notAServerHello }
        let suiteOffset = sessionIDLengthOffset + 1 + Int(sessionIDLength)
        guard let high = byte(suiteOffset), let low = byte(suiteOffset + 1) else { return .needMoreBytes }
        return .cipherSuite(UInt16(high) << 8 | UInt16(low))
    }

    /// The IANA name of a cipher suite: "TLS_AES_128_GCM_SHA256" for the TLS 1.3 suites, the number in
    /// hex for others.
    ///
    /// - Parameter suite: the suite's number.
    /// - Returns: its name.
    package static func name(ofCipherSuite suite: UInt16) -> String {
        switch suite {
        case 0x1301: return "TLS_AES_128_GCM_SHA256"
        case 0x1302: return "TLS_AES_256_GCM_SHA384"
        case 0x1303: return "TLS_CHACHA20_POLY1305_SHA256"
        default:
            let hex = String(suite, radix: 16, uppercase: true)
            return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }
}
