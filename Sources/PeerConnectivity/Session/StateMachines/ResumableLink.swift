import PeerConnectivityCore

/// What a session with reconnection keeps about the link to one peer, across its connections
/// (in ``SessionStateMachine``'s records). Generic like the machine: the session's is over
/// ``Connection`` and continuations, the tests' over stand-ins.
struct ResumableLink<Connection: AnyObject, Waiter> {
    /// The link is down and being re-established.
    struct Reconnecting {
        /// Tells this attempt's timers and dial loop from those of a later drop.
        let generation: Int
    }

    /// Numbering, acknowledgements and the messages kept until the peer confirms them.
    var ledger = DeliveryLedger<EncodedFrame>()
    /// The secret this side gave the peer (RESUME-SECRET): the peer shows it to resume.
    let localSecret: [UInt8]
    /// The secret the peer gave this side, to show when this side resumes.
    var peerSecret: [UInt8]?
    /// Whether the peer resumes links: `nil` until its first frame after establishment says so
    /// (RESUME-SECRET if it does, anything else if it does not).
    var peerResumes: Bool?
    /// The peer's session listener, where this side dials to resume.
    var endpoint: (host: String, port: Int)?
    /// Set while the link is down.
    var reconnecting: Reconnecting?
    /// A RESUME that arrived while the old connection still seemed up: answered once it has closed.
    var pendingResume: Connection?
    /// `send` calls waiting for room in the ledger (or for the link to come back).
    var sendWaiters: [Waiter] = []

    init() {
        var generator = SystemRandomNumberGenerator()
        localSecret = (0..<WireProtocol.resumeSecretLength).map { _ in
            UInt8.random(in: .min ... .max, using: &generator)
        }
    }

    /// Whether a drop of this link is resumed rather than reported.
    var isResumable: Bool { peerResumes == true && peerSecret != nil }

    /// Whether `secret` is this side's, compared in constant time.
    func matches(_ secret: [UInt8]) -> Bool {
        guard secret.count == localSecret.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(secret, localSecret) { difference |= a ^ b }
        return difference == 0
    }
}

extension ResumableLink: Sendable where Connection: Sendable, Waiter: Sendable {}
extension ResumableLink.Reconnecting: Sendable {}
