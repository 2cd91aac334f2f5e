/// How a connection to a peer is secured: encrypted or not, the TLS version and cipher suite, what the
/// peer proved and the code people compare.
public struct PeerSecurityInfo: Sendable, Hashable {
    /// Whether the connection runs over TLS 1.3. When `false` the other fields are empty.
    public let isEncrypted: Bool
    /// The peer's certificate, DER, as it presented it in the TLS handshake.
    public let certificate: [UInt8]
    /// SHA-256 of the peer's public key (its SubjectPublicKeyInfo DER): what trust-on-first-use pins.
    public let publicKeySHA256: [UInt8]
    /// Whether the peer's id is derived from that key (a version-8 id from a ``SecurityIdentity``),
    /// so the id itself proves who holds it; `false` for an id made by `PeerID(displayName:)`.
    public let isIDBoundToKey: Bool
    /// The 6-digit code both sides show, to compare before trusting the peer; `nil` when not encrypted.
    public let pairingCode: String?
    /// The TLS version in use ("TLS 1.3"); `nil` when not encrypted.
    public let tlsVersion: String?
    /// The TLS cipher suite in use, by its IANA name ("TLS_AES_128_GCM_SHA256"); `nil` when not
    /// encrypted, or when the server's first record could not be read.
    public let cipherSuite: String?

    /// A plain connection.
    public static let unencrypted = PeerSecurityInfo(
        isEncrypted: false,
        certificate: [],
        publicKeySHA256: [],
        isIDBoundToKey: false,
        pairingCode: nil
    )

    /// Makes the description of a connection's security.
    ///
    /// - Parameters:
    ///   - isEncrypted: whether it runs over TLS.
    ///   - certificate: the peer's certificate, DER.
    ///   - publicKeySHA256: SHA-256 of the peer's SubjectPublicKeyInfo.
    ///   - isIDBoundToKey: whether the peer's id is derived from its key.
    ///   - pairingCode: the 6-digit code.
    ///   - tlsVersion: the TLS version in use.
    ///   - cipherSuite: the cipher suite in use, by its IANA name.
    public init(
        isEncrypted: Bool,
        certificate: [UInt8],
        publicKeySHA256: [UInt8],
        isIDBoundToKey: Bool,
        pairingCode: String?,
        tlsVersion: String? = nil,
        cipherSuite: String? = nil
    ) {
        self.isEncrypted = isEncrypted
        self.certificate = certificate
        self.publicKeySHA256 = publicKeySHA256
        self.isIDBoundToKey = isIDBoundToKey
        self.pairingCode = pairingCode
        self.tlsVersion = tlsVersion
        self.cipherSuite = cipherSuite
    }

    /// The same description with the pairing code, once the exchange has given it.
    package func with(pairingCode: String) -> PeerSecurityInfo {
        changed(pairingCode: pairingCode, tlsVersion: tlsVersion, cipherSuite: cipherSuite)
    }

    /// The same description with the TLS version and cipher suite the connection uses.
    package func with(tlsVersion: String?, cipherSuite: String?) -> PeerSecurityInfo {
        changed(pairingCode: pairingCode, tlsVersion: tlsVersion, cipherSuite: cipherSuite)
    }

    private func changed(pairingCode: String?, tlsVersion: String?, cipherSuite: String?) -> PeerSecurityInfo {
        PeerSecurityInfo(
            isEncrypted: isEncrypted,
            certificate: certificate,
            publicKeySHA256: publicKeySHA256,
            isIDBoundToKey: isIDBoundToKey,
            pairingCode: pairingCode,
            tlsVersion: tlsVersion,
            cipherSuite: cipherSuite
        )
    }

    /// One line for logs and tool output: "plain (not encrypted)" or "TLS 1.3, TLS_AES_128_GCM_SHA256".
    public var summary: String {
        guard isEncrypted else { return "plain (not encrypted)" }
        return [tlsVersion ?? "TLS", cipherSuite].compactMap { $0 }.joined(separator: ", ")
    }
}
