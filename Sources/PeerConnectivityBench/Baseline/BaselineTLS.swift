import NIOSSL
import PeerConnectivity

/// The TLS of the raw baseline: what a PeerConnectivity session negotiates (TLS 1.3, the same library,
/// the same defaults for the cipher), with none of its framing, so that an encrypted run is compared
/// with encrypted TCP.
///
/// The server's certificate is self-signed and made once per process; the client accepts any. The
/// baseline measures the cost of the cipher and its record layer, not authentication.
enum BaselineTLS {
    /// The server's context: a new identity's self-signed P-256 certificate, TLS 1.3 only.
    static let serverContext: Result<NIOSSLContext, any Error> = Result {
        let identity = try SecurityIdentity(displayName: "peerconnectivity raw baseline")
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: identity.certificate, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
        )
        configuration.minimumTLSVersion = .tlsv13
        return try NIOSSLContext(configuration: configuration)
    }

    /// The client's context: TLS 1.3 only, no certificate check.
    static let clientContext: Result<NIOSSLContext, any Error> = Result {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv13
        configuration.certificateVerification = .none
        return try NIOSSLContext(configuration: configuration)
    }

    /// The first byte of a TLS handshake record: how the raw echo server tells a TLS client from a plain one.
    static let handshakeRecordType: UInt8 = 0x16

    /// "TLS 1.3", as ``PeerConnectivity/PeerSecurityInfo`` names versions.
    static func name(of version: TLSVersion?) -> String {
        switch version {
        case .tlsv1: "TLS 1.0"
        case .tlsv11: "TLS 1.1"
        case .tlsv12: "TLS 1.2"
        case .tlsv13: "TLS 1.3"
        case nil: "TLS"
        }
    }
}
