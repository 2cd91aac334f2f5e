/// Why an invitation did not end with the peer connected.
public struct InvitationError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case failed
        case peerNotFound
        case notPending
    }

    private let code: Code

    /// The peer invited, or inviting.
    public let peer: PeerID?

    /// Why it failed: `.declined`, `.timedOut`, `.connectionFailed`, `.sessionFull`, ...
    public let reason: DisconnectReason?

    private init(_ code: Code, peer: PeerID?, reason: DisconnectReason?) {
        self.code = code
        self.peer = peer
        self.reason = reason
    }

    /// The invitation failed for `reason` (declined, timed out, connection failed, ...).
    ///
    /// - Parameters:
    ///   - peer: the peer, when known.
    ///   - reason: why.
    public static func failed(peer: PeerID?, reason: DisconnectReason) -> InvitationError {
        InvitationError(.failed, peer: peer, reason: reason)
    }

    /// The browser has not found this peer (or has lost it).
    ///
    /// - Parameter peer: the peer.
    public static func peerNotFound(_ peer: PeerID) -> InvitationError {
        InvitationError(.peerNotFound, peer: peer, reason: nil)
    }

    /// The invitation was already answered, withdrawn by the inviter, or expired.
    ///
    /// - Parameters:
    ///   - peer: the inviter.
    ///   - reason: why it is no longer pending, when known.
    public static func notPending(peer: PeerID, reason: DisconnectReason?) -> InvitationError {
        InvitationError(.notPending, peer: peer, reason: reason)
    }

    /// A sentence saying what failed.
    public var description: String {
        let who = peer.map { "\($0)" } ?? "peer"
        switch code {
        case .failed:
            return "invitation of \(who) failed: \(reason.map { "\($0)" } ?? "unknown reason")"
        case .peerNotFound:
            return "\(who) has not been found by this browser (or was lost)"
        case .notPending:
            return "the invitation from \(who) is no longer pending\(reason.map { ": \($0)" } ?? "")"
        }
    }
}
