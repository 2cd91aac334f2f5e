import PeerConnectivityCore
import Testing

@Suite("The cipher suite read from a ServerHello")
struct TLSServerHelloTests {
    /// A ServerHello record as a TLS 1.3 server sends it: a 32-byte session id echo, then the suite.
    static func serverHello(suite: UInt16, sessionIDLength: UInt8 = 32) -> [UInt8] {
        var body: [UInt8] = [0x03, 0x03] + Array(repeating: 0x5A, count: 32) + [sessionIDLength]
        body += Array(repeating: 0x11, count: Int(sessionIDLength))
        body += [UInt8(suite >> 8), UInt8(suite & 0xFF), 0x00]  // suite, compression
        body += [0x00, 0x06, 0x00, 0x2B, 0x00, 0x02, 0x03, 0x04]  // supported_versions: TLS 1.3
        let handshake: [UInt8] = [0x02, 0x00, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        return [0x16, 0x03, 0x03, UInt8(handshake.count >> 8), UInt8(handshake.count & 0xFF)] + handshake
    }

    @Test("the suite is read from a whole record, with any session id length")
    func wholeRecord() {
        for length: UInt8 in [0, 1, 32] {
            #expect(
                TLSServerHello.read(Self.serverHello(suite: 0x1302, sessionIDLength: length)) == .cipherSuite(0x1302)
            )
        }
    }

    @Test("too few bytes ask for more, at every cut before the suite")
    func cutRecord() {
        let record = Self.serverHello(suite: 0x1301)
        let suiteEnd = 5 + 4 + 2 + 32 + 1 + 32 + 2
        for cut in 0..<suiteEnd {
            #expect(TLSServerHello.read(record.prefix(cut)) == .needMoreBytes, "cut at \(cut)")
        }
        #expect(TLSServerHello.read(record.prefix(suiteEnd)) == .cipherSuite(0x1301))
    }

    @Test("another record type, another handshake message or a session id over 32 bytes is not a ServerHello")
    func notAServerHello() {
        var record = Self.serverHello(suite: 0x1301)
        record[0] = 0x17
        #expect(TLSServerHello.read(record) == .notAServerHello)
        record = Self.serverHello(suite: 0x1301)
        record[5] = 0x01  // ClientHello
        #expect(TLSServerHello.read(record) == .notAServerHello)
        record = Self.serverHello(suite: 0x1301)
        record[43] = 33
        #expect(TLSServerHello.read(record) == .notAServerHello)
        #expect(TLSServerHello.read(Array("GOODBYE".utf8)) == .notAServerHello)
    }

    @Test("the TLS 1.3 suites by their IANA names, others in hex")
    func names() {
        #expect(TLSServerHello.name(ofCipherSuite: 0x1301) == "TLS_AES_128_GCM_SHA256")
        #expect(TLSServerHello.name(ofCipherSuite: 0x1302) == "TLS_AES_256_GCM_SHA384")
        #expect(TLSServerHello.name(ofCipherSuite: 0x1303) == "TLS_CHACHA20_POLY1305_SHA256")
        #expect(TLSServerHello.name(ofCipherSuite: 0xC02F) == "0xC02F")
        #expect(TLSServerHello.name(ofCipherSuite: 0x0A) == "0x000A")
    }
}
