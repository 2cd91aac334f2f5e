import NIOCore
import NIOSSL
import PeerConnectivityCore

/// What a side needs to encrypt its connections: its preference, its TLS contexts (its certificate
/// and key), and the checks it applies to the peer's certificate. Filled in by the public API from a
/// `SecurityIdentity` and the certificate policy; the TLS layer itself knows no PKI.
package struct ConnectionSecurity: Sendable {
    /// What the peer's certificate proved, once checked against its HELLO.
    package struct Verified: Sendable {
        /// The peer's public key, SubjectPublicKeyInfo DER (for the pairing code).
        package var publicKey: [UInt8]
        /// What the application may see of it (the pairing code comes later).
        package var info: PeerSecurityInfo

        package init(publicKey: [UInt8], info: PeerSecurityInfo) {
            self.publicKey = publicKey
            self.info = info
        }
    }

    /// What the binding rule concluded about a certificate.
    package enum Verification: Sendable {
        /// The certificate proves the claimed PeerID (or the id is not key-derived).
        case proved(Verified)
        /// Refused, and why.
        case refused(DisconnectReason)
    }

    /// This side's preference, sent in HELLO.
    package var preference: EncryptionPreference
    /// The TLS client context (the inviter's side): this side's certificate, TLS 1.3 only, no PKI.
    package let clientContext: NIOSSLContext
    /// The TLS server context (the invitee's side), asking for the client's certificate.
    package let serverContext: NIOSSLContext
    /// This side's public key, SubjectPublicKeyInfo DER.
    package let localPublicKey: [UInt8]
    /// SHA-256, for the pairing exchange.
    package let hash: PairingExchange.Hash
    /// Checks the peer's certificate (DER) against the PeerID it claimed in HELLO (the binding rule):
    /// returns what it proved, or why it is refused.
    package let verify: @Sendable (_ certificate: [UInt8], _ claimed: PeerID) -> Verification
    /// The certificate decision once the pairing code is known: `nil` accepts, a reason refuses.
    /// `nil` here accepts every certificate whose binding holds, at once.
    package let decide: (@Sendable (PeerID, PeerSecurityInfo) async -> DisconnectReason?)?
    /// How long the invitee waits for the certificate decision (its handshake timeout stops meanwhile).
    package var decisionTimeout: TimeAmount

    /// Makes the security settings.
    ///
    /// - Parameters:
    ///   - preference: this side's encryption preference.
    ///   - certificate: this side's certificate, DER.
    ///   - privateKeyPEM: its private key, PEM (PKCS #8).
    ///   - localPublicKey: its public key, SubjectPublicKeyInfo DER.
    ///   - hash: SHA-256.
    ///   - verify: the binding rule.
    ///   - decide: the certificate decision, `nil` to accept every bound certificate.
    ///   - decisionTimeout: how long the invitee waits for the decision.
    /// - Throws: when BoringSSL rejects the certificate or key.
    package init(
        preference: EncryptionPreference,
        certificate: [UInt8],
        privateKeyPEM: String,
        localPublicKey: [UInt8],
        hash: @escaping PairingExchange.Hash,
        verify: @escaping @Sendable (_ certificate: [UInt8], _ claimed: PeerID) -> Verification,
        decide: (@Sendable (PeerID, PeerSecurityInfo) async -> DisconnectReason?)?,
        decisionTimeout: TimeAmount
    ) throws {
        let sslCertificate = try NIOSSLCertificate(bytes: certificate, format: .der)
        let sslKey = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        var client = TLSConfiguration.makeClientConfiguration()
        var server = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(sslCertificate)],
            privateKey: .privateKey(sslKey)
        )
        client.certificateChain = [.certificate(sslCertificate)]
        client.privateKey = .privateKey(sslKey)
        for index in [0, 1] {
            var configuration = index == 0 ? client : server
            configuration.minimumTLSVersion = .tlsv13
            // No PKI: the custom verification callback takes every certificate the peer proves it
            // holds the key of; the binding rule and the certificate decision follow the handshake.
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([])
            // On close, everything is already written; waiting for the peer's close_notify only
            // delays reporting a dead peer (liveness timeout), so wait briefly.
            configuration.shutdownTimeout = .milliseconds(100)
            if index == 0 { client = configuration } else { server = configuration }
        }
        self.clientContext = try NIOSSLContext(configuration: client)
        self.serverContext = try NIOSSLContext(configuration: server)
        self.preference = preference
        self.localPublicKey = localPublicKey
        self.hash = hash
        self.verify = verify
        self.decide = decide
        self.decisionTimeout = decisionTimeout
    }
}
