/// Why a ``Session`` operation failed.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case peerNotConnected
        case sessionFull
        case alreadyInSession
        case messageTooLarge(size: Int, limit: Int)
        case messageTooLargeForPeer(size: Int, limit: Int)
        case messageNotDelivered(detail: String)
        case noPeers
    }

    private let code: Code

    /// The peer concerned, when there is one.
    public let peer: PeerID?

    /// Why the peer is not connected, when known.
    public let reason: DisconnectReason?

    /// The session's peer limit, for ``sessionFull(limit:)``.
    public let limit: Int?

    private init(_ code: Code, peer: PeerID? = nil, reason: DisconnectReason? = nil, limit: Int? = nil) {
        self.code = code
        self.peer = peer
        self.reason = reason
        self.limit = limit
    }

    /// A target of `send` is not connected (never was, or its connection closed).
    ///
    /// - Parameters:
    ///   - peer: the peer.
    ///   - reason: why it is not connected, when known.
    public static func peerNotConnected(_ peer: PeerID, reason: DisconnectReason? = nil) -> SessionError {
        SessionError(.peerNotConnected, peer: peer, reason: reason)
    }

    /// The session already holds its maximum number of peers.
    ///
    /// - Parameter limit: ``Session/Configuration/maximumPeers``.
    public static func sessionFull(limit: Int) -> SessionError { SessionError(.sessionFull, limit: limit) }

    /// The peer is already connected or connecting in this session.
    ///
    /// - Parameter peer: the peer.
    public static func alreadyInSession(_ peer: PeerID) -> SessionError { SessionError(.alreadyInSession, peer: peer) }

    /// The message is larger than ``Session/Configuration/maximumMessageLength``.
    ///
    /// - Parameters:
    ///   - size: the message's size in bytes.
    ///   - limit: the limit.
    public static func messageTooLarge(size: Int, limit: Int) -> SessionError {
        SessionError(.messageTooLarge(size: size, limit: limit))
    }

    /// The message is larger than a target accepts: the limit the peer announced when the connection
    /// was made (its own ``Session/Configuration/maximumMessageLength``). Nothing was sent to any target,
    /// and the connection stays up.
    ///
    /// - Parameters:
    ///   - peer: the peer whose limit it exceeds.
    ///   - size: the message's size in bytes.
    ///   - limit: the peer's limit.
    public static func messageTooLargeForPeer(_ peer: PeerID, size: Int, limit: Int) -> SessionError {
        SessionError(.messageTooLargeForPeer(size: size, limit: limit), peer: peer)
    }

    /// A large message (over 1 MiB, sent in chunks) did not reach the peer whole: the peer refused or
    /// cancelled it. (A connection that closes during the transfer is ``peerNotConnected(_:reason:)``.)
    ///
    /// - Parameters:
    ///   - peer: the peer.
    ///   - detail: what happened.
    public static func messageNotDelivered(_ peer: PeerID, detail: String) -> SessionError {
        SessionError(.messageNotDelivered(detail: detail), peer: peer)
    }

    /// `send` was given no peers.
    public static let noPeers = SessionError(.noPeers)

    /// What an invitee tells the inviter when accepting fails with this error.
    var declineReason: DisconnectReason {
        code == .sessionFull ? .sessionFull : .declined.with(detail: description)
    }

    /// Errors are equal when they are of the same kind and name the same peer.
    public static func == (lhs: SessionError, rhs: SessionError) -> Bool {
        lhs.code == rhs.code && lhs.peer == rhs.peer
    }

    /// Hashes the kind and the peer.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(peer)
    }

    /// A sentence saying what failed.
    public var description: String {
        switch code {
        case .peerNotConnected:
            let why = reason.map { " (\($0))" } ?? ""
            return "peer \(peer.map { "\($0)" } ?? "?") is not connected\(why)"
        case .sessionFull:
            return "the session is full: it holds at most \(limit ?? 0) peers (Session.Configuration.maximumPeers)"
        case .alreadyInSession:
            return "peer \(peer.map { "\($0)" } ?? "?") is already connected or connecting in this session"
        case .messageTooLarge(let size, let limit):
            return
                "message of \(size) bytes exceeds the limit of \(limit) bytes (Session.Configuration.maximumMessageLength)"
        case .messageTooLargeForPeer(let size, let limit):
            return
                "message of \(size) bytes exceeds the limit of \(limit) bytes that peer \(peer.map { "\($0)" } ?? "?") accepts; nothing was sent"
        case .messageNotDelivered(let detail):
            return "the message did not reach peer \(peer.map { "\($0)" } ?? "?") whole: \(detail)"
        case .noPeers:
            return "no peers given to send to"
        }
    }
}
