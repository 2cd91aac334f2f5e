/// How a session or advertiser decides on a peer's certificate once TLS is up and the binding rule
/// holds (the certificate proves the PeerID the peer claims; see ``SecurityIdentity``).
public struct CertificatePolicy: Sendable {
    enum Kind: Sendable {
        case acceptBound
        case trustOnFirstUse(TrustStore)
        case ask(Duration)
    }

    let kind: Kind

    /// Accept every certificate whose binding holds (the default). A key-derived PeerID cannot be
    /// impersonated; a plain one (made by `PeerID(displayName:)`) can, by anyone with its own key.
    public static let acceptBound = CertificatePolicy(kind: .acceptBound)

    /// Pin each peer's key the first time it is seen, and refuse a changed key naming the peer.
    ///
    /// - Parameter store: where the pins are kept.
    /// - Returns: the policy.
    public static func trustOnFirstUse(_ store: TrustStore) -> CertificatePolicy {
        CertificatePolicy(kind: .trustOnFirstUse(store))
    }

    /// Ask the application: each certificate arrives as a ``CertificateRequest`` on the session's or
    /// advertiser's `certificateRequests`, with the pairing code; unanswered within `timeout` is rejected.
    ///
    /// - Parameter timeout: how long the application has to answer.
    /// - Returns: the policy.
    public static func ask(timeout: Duration = .seconds(60)) -> CertificatePolicy {
        CertificatePolicy(kind: .ask(timeout))
    }

    /// Whether the policy has seen `peer` encrypted before: its key is pinned in the trust store. Such a
    /// peer is never accepted in the clear (``DisconnectReason/downgradeRefused``).
    ///
    /// - Parameter peer: the peer a HELLO names.
    /// - Returns: `true` when its key is pinned.
    func hasSeenEncrypted(_ peer: PeerID) -> Bool {
        guard case .trustOnFirstUse(let store) = kind else { return false }
        return store.pinnedKey(for: peer.id) != nil
    }
}
