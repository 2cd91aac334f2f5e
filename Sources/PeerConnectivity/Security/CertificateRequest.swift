import Synchronization

/// A peer's certificate, waiting for the application's decision (``CertificatePolicy/ask(timeout:)``),
/// as MPC's certificateHandler. Compare ``pairingCode`` with the one the peer's person sees, then
/// call ``accept()`` or ``reject()``; unanswered within the policy's timeout it is rejected.
public final class CertificateRequest: Sendable {
    /// The peer, as it claimed in HELLO and proved in TLS.
    public let peer: PeerID
    /// How the connection is secured: the certificate (DER), its key's fingerprint, the pairing code.
    public let security: PeerSecurityInfo

    /// The 6-digit code both sides show.
    public var pairingCode: String { security.pairingCode ?? "" }

    private let verdict = Mutex<Verdict>(.pending([]))

    private enum Verdict {
        case pending([CheckedContinuation<Bool, Never>])
        case decided(Bool)
    }

    init(peer: PeerID, security: PeerSecurityInfo) {
        self.peer = peer
        self.security = security
    }

    /// Trusts the peer: the connection goes on (its invitation is delivered, or sent).
    public func accept() async {
        decide(true)
    }

    /// Refuses the peer: both sides see `DisconnectReason.certificateRejected`.
    public func reject() async {
        decide(false)
    }

    /// Settles the request once; later answers are ignored.
    func decide(_ accepted: Bool) {
        let waiters: [CheckedContinuation<Bool, Never>] = verdict.withLock { verdict in
            guard case .pending(let waiters) = verdict else { return [] }
            verdict = .decided(accepted)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: accepted) }
    }

    /// Waits for the answer.
    func answer() async -> Bool {
        await withCheckedContinuation { continuation in
            let decided: Bool? = verdict.withLock { verdict in
                switch verdict {
                case .pending(let waiters):
                    verdict = .pending(waiters + [continuation])
                    return nil
                case .decided(let accepted):
                    return accepted
                }
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }
}
