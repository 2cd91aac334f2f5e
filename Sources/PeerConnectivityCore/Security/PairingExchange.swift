/// The pairing code of an encrypted connection, from a commitment exchange inside TLS (as
/// Bluetooth's numeric comparison): both people compare 6 digits before they trust the peer.
///
/// With A the inviter and B the invitee, pk their certificates' public keys (SubjectPublicKeyInfo DER)
/// and n a random 32-byte nonce each:
/// 1. B sends PAIR-COMMIT with C = SHA-256(pkB ‖ pkA ‖ nB);
/// 2. A sends PAIR-NONCE with nA; 3. B sends PAIR-NONCE with nB; A checks C.
/// The code is the first 8 bytes of SHA-256("PCON pairing" ‖ pkA ‖ pkB ‖ nA ‖ nB), big-endian,
/// modulo 1,000,000, as 6 digits. B commits to nB before it sees nA, and A sends nA before it sees
/// nB, so a man in the middle cannot search for keys or nonces that give both sides the same code.
///
/// Pure: the hash function is passed in (SHA-256 in the library), so the exchange is tested in memory.
package struct PairingExchange: Sendable {
    /// A hash function: SHA-256 in the library.
    package typealias Hash = @Sendable ([UInt8]) -> [UInt8]

    /// The length of a nonce, and of a commitment.
    package static let nonceLength = 32

    private let isInviter: Bool
    private let inviterKey: [UInt8]
    private let inviteeKey: [UInt8]
    /// This side's nonce.
    package let localNonce: [UInt8]
    private let hash: Hash

    /// Prepares the exchange once TLS is up and the peer's key is known.
    ///
    /// - Parameters:
    ///   - isInviter: whether this side invited (A) or was invited (B).
    ///   - localKey: this side's public key (SubjectPublicKeyInfo DER).
    ///   - peerKey: the public key the peer proved in the TLS handshake.
    ///   - localNonce: 32 random bytes.
    ///   - hash: SHA-256.
    package init(isInviter: Bool, localKey: [UInt8], peerKey: [UInt8], localNonce: [UInt8], hash: @escaping Hash) {
        precondition(localNonce.count == Self.nonceLength, "a pairing nonce is 32 bytes")
        self.isInviter = isInviter
        self.inviterKey = isInviter ? localKey : peerKey
        self.inviteeKey = isInviter ? peerKey : localKey
        self.localNonce = localNonce
        self.hash = hash
    }

    /// The invitee's commitment to its nonce: SHA-256(pkB ‖ pkA ‖ nB).
    package var localCommitment: [UInt8] {
        hash(inviteeKey + inviterKey + localNonce)
    }

    /// The inviter checks the invitee's nonce against the commitment it received first.
    ///
    /// - Parameters:
    ///   - commitment: from PAIR-COMMIT.
    ///   - inviteeNonce: from the invitee's PAIR-NONCE.
    /// - Returns: whether the commitment holds.
    package func verify(commitment: [UInt8], inviteeNonce: [UInt8]) -> Bool {
        hash(inviteeKey + inviterKey + inviteeNonce) == commitment
    }

    /// The 6-digit code both sides show.
    ///
    /// - Parameter peerNonce: the nonce the peer sent.
    /// - Returns: six decimal digits, zero-padded.
    package func code(peerNonce: [UInt8]) -> String {
        let inviterNonce = isInviter ? localNonce : peerNonce
        let inviteeNonce = isInviter ? peerNonce : localNonce
        let digest = hash(Array("PCON pairing".utf8) + inviterKey + inviteeKey + inviterNonce + inviteeNonce)
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let number = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - number.count) + number
    }
}
