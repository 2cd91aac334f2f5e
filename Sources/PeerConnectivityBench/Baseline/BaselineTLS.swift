import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The TLS of the raw baseline: what a PeerConnectivity session negotiates (TLS 1.3, the same library,
/// the same defaults for the cipher), with none of its framing, so that an encrypted run is compared
/// with encrypted TCP.
///
/// The server's certificate is self-signed and made once per process; the client accepts any. The
/// baseline measures the cost of the cipher and its record layer, not authentication.
enum BaselineTLS {
    /// The server's context: an ephemeral P-256 key and its self-signed certificate, TLS 1.3 only.
    static let serverContext: Result<NIOSSLContext, any Error> = Result {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("peerconnectivity raw baseline") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(30 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
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
