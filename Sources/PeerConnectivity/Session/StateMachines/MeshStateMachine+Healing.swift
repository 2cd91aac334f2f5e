import PeerConnectivityCore

/// A mesh that heals: a dial to a member that fails (refused, timed out, a stale port) is tried again
/// with backoff while a connected member still introduces it, at the address of its latest
/// introduction; a member whose link was lost (not one that left) is dialled again by the lower peer id.
/// Bounded: ``maximumDialAttempts`` attempts per member, then the session gives up on it until a new
/// introduction or loss starts over.
extension MeshStateMachine {
    /// One member's dial, under way or waiting to be tried again.
    struct MemberDial {
        /// Which attempt this is (1 for the first).
        var attempt: Int
        /// The connection whose MEMBERS introduced the member, counted against its dial limit while the
        /// first attempt is under way; `nil` for a retry or a redial after a loss.
        var introducer: ObjectIdentifier?
        /// Set while the dial waits for its retry timer: the timer's generation.
        var retry: Int?
    }

    /// How a dial that ``MeshStateMachine/introduced(_:by:isHeld:)``, ``retryDue(_:generation:isHeld:)``
    /// or ``peerLost(_:reason:)`` asked for ended.
    enum DialOutcome {
        /// Connected to the member.
        case connected
        /// The session held the member already (it dialled this side meanwhile): nothing to do.
        case held
        /// It failed, with why.
        case failed(DisconnectReason)
    }

    /// A dial to try again after `delay`; report the timer with ``retryDue(_:generation:isHeld:)``.
    struct Retry: Equatable {
        let peer: PeerID
        let attempt: Int
        let delay: Duration
        let generation: Int
    }

    /// Attempts per member before the session gives up on it.
    static var maximumDialAttempts: Int { 6 }

    /// The wait before attempt `attempt` (2 and up): 0.5 s, doubling, at most 8 s.
    static func retryDelay(beforeAttempt attempt: Int) -> Duration {
        let milliseconds = 500 << min(max(attempt - 2, 0), 4)
        return .milliseconds(min(milliseconds, 8_000))
    }

    /// A dial to `peer` ended.
    ///
    /// - Returns: the retry to schedule, or `nil` (connected, held, no longer introduced, or the last
    ///   attempt failed).
    mutating func dialEnded(_ peer: PeerID, _ outcome: DialOutcome) -> Retry? {
        guard var dial = memberDials[peer], dial.retry == nil else { return nil }
        countDialEnded(introducedBy: dial.introducer)
        dial.introducer = nil
        guard case .failed = outcome, introduced[peer] != nil, dial.attempt < Self.maximumDialAttempts else {
            memberDials[peer] = nil
            return nil
        }
        retryGeneration += 1
        dial.retry = retryGeneration
        memberDials[peer] = dial
        let next = dial.attempt + 1
        return Retry(
            peer: peer,
            attempt: next,
            delay: Self.retryDelay(beforeAttempt: next),
            generation: retryGeneration
        )
    }

    /// The retry timer of `generation` fired.
    ///
    /// - Parameter isHeld: whether the session holds `peer` now (it dialled this side meanwhile).
    /// - Returns: the member to dial (its latest introduction), or `nil`.
    mutating func retryDue(_ peer: PeerID, generation: Int, isHeld: Bool) -> Frame.Member? {
        guard var dial = memberDials[peer], dial.retry == generation else { return nil }
        guard !isClosed, !isHeld, let introduction = introduced[peer] else {
            memberDials[peer] = nil
            return nil
        }
        dial.retry = nil
        dial.attempt += 1
        memberDials[peer] = dial
        return introduction.member
    }

    /// The session stopped holding `peer` for `reason`.
    ///
    /// - Returns: the member to dial again: its link was lost (not left), a connected member still
    ///   introduces it, this side has the lower id, and no dial to it is under way.
    mutating func peerLost(_ peer: PeerID, reason: DisconnectReason) -> Frame.Member? {
        guard !isClosed, reason == .connectionLost || reason == .livenessTimeout, memberDials[peer] == nil,
            let introduction = introduced[peer], dials(peer)
        else { return nil }
        memberDials[peer] = MemberDial(attempt: 1)
        return introduction.member
    }

    /// A retry that is waiting, for a member: its generation (tests).
    func pendingRetry(for peer: PeerID) -> Int? {
        memberDials[peer]?.retry
    }
}
