import Crypto
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import SwiftASN1
import X509

/// Turns an identity, a preference and a certificate policy into the transport's
/// ``ConnectionSecurity``: the TLS contexts, the binding rule, and the certificate decision.
enum SecuritySetup {
    /// The settings for a session's or an advertiser's connections.
    ///
    /// - Parameters:
    ///   - identity: this side's identity.
    ///   - preference: its encryption preference.
    ///   - policy: the certificate decision.
    ///   - requests: where ``CertificatePolicy/ask(timeout:)`` sends its requests.
    ///   - eventLoop: where an unanswered request's timeout runs.
    /// - Returns: the settings, or `nil` when the preference is none.
    static func make(
        identity: SecurityIdentity,
        preference: EncryptionPreference,
        policy: CertificatePolicy,
        requests: AsyncStream<CertificateRequest>.Continuation,
        eventLoop: any EventLoop
    ) -> ConnectionSecurity? {
        guard preference != .none else { return nil }
        let decide: (@Sendable (PeerID, PeerSecurityInfo) async -> DisconnectReason?)?
        var decisionTimeout = TimeAmount.seconds(5)
        switch policy.kind {
        case .acceptBound:
            decide = nil
        case .trustOnFirstUse(let store):
            decide = { peer, info in store.check(peer, fingerprint: info.publicKeySHA256) }
        case .ask(let timeout):
            decisionTimeout = TimeAmount(timeout)
            decide = { peer, info in
                let request = CertificateRequest(peer: peer, security: info)
                requests.yield(request)
                // Unanswered in time, the request is rejected: a timer on the event loop, no sleeping task.
                let expiry = eventLoop.scheduleTask(in: TimeAmount(timeout)) { request.decide(false) }
                let accepted = await request.answer()
                expiry.cancel()
                return accepted
                    ? nil
                    : DisconnectReason.certificateRejected.with(
                        detail: "the application rejected \(peer)'s certificate"
                    )
            }
        }
        do {
            return try ConnectionSecurity(
                preference: preference,
                certificate: identity.certificate,
                privateKeyPEM: identity.privateKey.pemRepresentation,
                localPublicKey: identity.publicKeyInfo,
                hash: { Array(SHA256.hash(data: $0)) },
                verify: { verify($0, claimed: $1) },
                decide: decide,
                decisionTimeout: decisionTimeout
            )
        } catch {
            preconditionFailure("BoringSSL refused a certificate made by SecurityIdentity: \(error)")
        }
    }

    /// The binding rule: the certificate must parse, be validly self-signed and in its validity
    /// period; when the claimed id is key-derived (version 8) it must be derived from the certificate's key.
    ///
    /// - Parameters:
    ///   - certificate: the peer's certificate, DER (the peer proved in TLS that it holds its key).
    ///   - claimed: the PeerID the peer claimed in HELLO.
    /// - Returns: what the certificate proved, or why it is refused.
    @Sendable
    static func verify(_ certificate: [UInt8], claimed: PeerID) -> ConnectionSecurity.Verification {
        let parsed: Certificate
        do {
            parsed = try Certificate(derEncoded: certificate)
        } catch {
            return .refused(.identityMismatch.with(detail: "\(claimed) sent a certificate that does not parse"))
        }
        guard parsed.issuer == parsed.subject, parsed.publicKey.isValidSignature(parsed.signature, for: parsed) else {
            return .refused(.identityMismatch.with(detail: "\(claimed)'s certificate is not validly self-signed"))
        }
        let now = Date()
        guard parsed.notValidBefore <= now.addingTimeInterval(300), now <= parsed.notValidAfter else {
            return .refused(.identityMismatch.with(detail: "\(claimed)'s certificate is outside its validity period"))
        }
        guard let spki = try? SecurityIdentity.subjectPublicKeyInfo(parsed.publicKey) else {
            return .refused(.identityMismatch.with(detail: "\(claimed)'s public key does not serialize"))
        }
        let bound = SecurityIdentity.isKeyDerived(claimed.id)
        if bound, SecurityIdentity.derivedID(fromSubjectPublicKeyInfo: spki) != claimed.id {
            return .refused(
                .identityMismatch.with(
                    detail: "\(claimed) claims a key-derived id, but its certificate's key derives another"
                )
            )
        }
        let info = PeerSecurityInfo(
            isEncrypted: true,
            certificate: certificate,
            publicKeySHA256: Array(SHA256.hash(data: spki)),
            isIDBoundToKey: bound,
            pairingCode: nil
        )
        return .proved(ConnectionSecurity.Verified(publicKey: spki, info: info))
    }
}
