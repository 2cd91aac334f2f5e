import Crypto
import Foundation
import SwiftASN1
import X509

/// A peer's cryptographic identity: a P-256 key and a self-signed X.509 certificate for a
/// ``PeerID`` whose id is derived from that key, so the id itself proves who holds the key.
///
/// The id is the first 16 bytes of SHA-256 of the public key (its SubjectPublicKeyInfo, DER) with
/// the version (8) and variant bits of RFC 9562 set. On every encrypted connection the peer proves
/// in the TLS handshake that it holds the key of its certificate, and the receiver checks that the
/// id it claimed is derived from that key: nobody can pose as such a PeerID without its private key.
///
/// Make one once and keep it (it is `Codable`, and the private key is in it: store it as a secret):
///
/// ```swift
/// let identity = try SecurityIdentity.loadOrCreate(at: url, displayName: "alice")
/// let session = Session(identity: identity)
/// ```
public struct SecurityIdentity: Sendable, Codable {
    /// The peer this identity proves; its id is derived from ``certificate``'s key.
    public let peer: PeerID
    /// The self-signed certificate, DER. Its subject carries the display name (common name) and the id
    /// (organizational unit).
    public let certificate: [UInt8]
    let privateKey: P256.Signing.PrivateKey

    /// The private key, PEM (PKCS #8), for the package's other TLS users (the tools' TLS baseline).
    package var privateKeyPEM: String { privateKey.pemRepresentation }

    private enum CodingKeys: String, CodingKey {
        case peer, certificate, privateKey
    }

    /// Makes a new identity: a fresh key, its key-derived ``PeerID`` and a self-signed certificate
    /// valid for 20 years.
    ///
    /// - Parameter displayName: the name shown to other peers, 1 to 63 bytes of UTF-8.
    /// - Throws: ``PeerIDError`` for an invalid name; ``SecurityIdentityError`` if the certificate
    ///   cannot be made.
    public init(displayName: String) throws {
        try PeerID.validate(displayName: displayName)
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let spki = try Self.subjectPublicKeyInfo(publicKey)
        let peer = try PeerID(id: Self.derivedID(fromSubjectPublicKeyInfo: spki), displayName: displayName)
        do {
            self.certificate = try Self.selfSignedCertificate(for: key, peer: peer, yearsValid: 20)
        } catch {
            throw SecurityIdentityError.invalid("the certificate could not be made: \(error)")
        }
        self.peer = peer
        self.privateKey = key
    }

    /// Decodes a stored identity and checks it: the key must match the certificate, and the id be
    /// derived from it.
    ///
    /// - Parameter decoder: the decoder to read from.
    /// - Throws: `DecodingError` for missing fields; ``SecurityIdentityError`` when the parts do not fit.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let peer = try container.decode(PeerID.self, forKey: .peer)
        let certificate = try container.decode([UInt8].self, forKey: .certificate)
        let keyBytes = try container.decode(Data.self, forKey: .privateKey)
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(rawRepresentation: keyBytes)
        } catch {
            throw SecurityIdentityError.invalid("the private key is not a P-256 key")
        }
        let parsed: Certificate
        do {
            parsed = try Certificate(derEncoded: certificate)
        } catch {
            throw SecurityIdentityError.invalid("the certificate does not parse: \(error)")
        }
        guard parsed.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw SecurityIdentityError.invalid("the private key does not belong to the certificate")
        }
        let spki = try Self.subjectPublicKeyInfo(parsed.publicKey)
        guard peer.id == Self.derivedID(fromSubjectPublicKeyInfo: spki) else {
            throw SecurityIdentityError.invalid("the peer id \(peer.id) is not derived from the certificate's key")
        }
        self.peer = peer
        self.certificate = certificate
        self.privateKey = key
    }

    /// Encodes the identity, private key included.
    ///
    /// - Parameter encoder: the encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(peer, forKey: .peer)
        try container.encode(certificate, forKey: .certificate)
        try container.encode(privateKey.rawRepresentation, forKey: .privateKey)
    }

    /// Reads an identity saved by ``save(to:)``.
    ///
    /// - Parameter url: the file.
    /// - Returns: the identity.
    /// - Throws: ``SecurityIdentityError`` when the file cannot be read or is not a valid identity.
    public static func load(from url: URL) throws(SecurityIdentityError) -> SecurityIdentity {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(url.path, "\(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(SecurityIdentity.self, from: data)
        } catch let error as SecurityIdentityError {
            throw .corrupt(url.path, error.description)
        } catch {
            throw .corrupt(url.path, "\(error)")
        }
    }

    /// Writes the identity to `url` (JSON, private key included), readable by the owner only (0600).
    ///
    /// - Parameter url: the file; replaced if it exists.
    /// - Throws: ``SecurityIdentityError`` when it cannot be written.
    public func save(to url: URL) throws(SecurityIdentityError) {
        do {
            let data = try JSONEncoder().encode(self)
            let path = url.path
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            try data.write(to: url)
        } catch {
            throw .unwritable(url.path, "\(error)")
        }
    }

    /// The identity stored at `url`, or a new one saved there: "created once and persisted with its PeerID".
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - displayName: the name for a new identity (a loaded one keeps its own).
    /// - Returns: the identity.
    /// - Throws: ``SecurityIdentityError`` when the file exists but cannot be read or is corrupt (it is
    ///   never overwritten then), or a new one cannot be saved; ``PeerIDError`` for an invalid name.
    public static func loadOrCreate(at url: URL, displayName: String) throws -> SecurityIdentity {
        if FileManager.default.fileExists(atPath: url.path) {
            return try load(from: url)
        }
        let identity = try SecurityIdentity(displayName: displayName)
        try identity.save(to: url)
        return identity
    }

    /// An identity for a plain (not key-derived) PeerID: used by sessions made without one, so they
    /// can still encrypt. Its id is not self-certifying.
    init(ephemeralFor peer: PeerID) throws {
        let key = P256.Signing.PrivateKey()
        self.certificate = try Self.selfSignedCertificate(for: key, peer: peer, yearsValid: 1)
        self.peer = peer
        self.privateKey = key
    }

    /// This identity's public key, SubjectPublicKeyInfo DER.
    var publicKeyInfo: [UInt8] {
        // The key was checked when the identity was made or decoded; serializing it cannot fail.
        (try? Self.subjectPublicKeyInfo(Certificate.PublicKey(privateKey.publicKey))) ?? []
    }

    /// A self-signed certificate for `key`, DER: subject and issuer name `peer` (its display name, and its
    /// id as the organizational unit); valid from an hour ago, for `yearsValid` years.
    private static func selfSignedCertificate(
        for key: P256.Signing.PrivateKey,
        peer: PeerID,
        yearsValid: Int
    ) throws -> [UInt8] {
        let name = try DistinguishedName {
            CommonName(peer.displayName)
            OrganizationalUnitName(peer.id.uuidString.lowercased())
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(Double(yearsValid) * 365 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The DER SubjectPublicKeyInfo of a key.
    static func subjectPublicKeyInfo(_ key: Certificate.PublicKey) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(key)
        return serializer.serializedBytes
    }

    /// The version-8 id derived from a public key: SHA-256 of its SubjectPublicKeyInfo, first 16 bytes,
    /// with the RFC 9562 version (8) and variant (10) bits set.
    ///
    /// - Parameter spki: the key, SubjectPublicKeyInfo DER.
    /// - Returns: the id.
    public static func derivedID(fromSubjectPublicKeyInfo spki: [UInt8]) -> UUID {
        var bytes = Array(SHA256.hash(data: spki).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// Whether an id is key-derived (version 8), so it must match the key of the certificate that claims it.
    ///
    /// - Parameter id: a peer id.
    /// - Returns: `true` for a version-8 id.
    public static func isKeyDerived(_ id: UUID) -> Bool {
        id.uuid.6 >> 4 == 8
    }
}
