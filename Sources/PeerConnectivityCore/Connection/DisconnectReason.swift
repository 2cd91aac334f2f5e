/// Why a peer is, or went, `notConnected`.
///
/// Compare with the static members (`reason == .declined`): equality looks at the kind of reason
/// only, while ``detail`` carries context for logs and people.
public struct DisconnectReason: Hashable, Sendable, CustomStringConvertible {
    private enum Code: UInt8, Hashable, Sendable {
        case localDisconnect = 1
        case peerDisconnected = 2
        case declined = 3
        case timedOut = 4
        case connectionLost = 5
        case livenessTimeout = 6
        case protocolViolation = 7
        case incompatibleVersion = 8
        case sessionFull = 9
        case unexpectedPeer = 10
        case connectionFailed = 11
        case handshakeTimeout = 12
        case busy = 13
        case duplicate = 14
        case encryptionRequired = 15
        case identityMismatch = 16
        case certificateRejected = 17
        case pairingFailed = 18
        case securityFailed = 19
        case rateLimited = 20
        case overloaded = 21
        case reconnectionFailed = 23
        case resumeRefused = 24
        case downgradeRefused = 25
    }

    private let code: Code

    /// Context for logs and people: the frame that broke the protocol, the socket error, and so on.
    public let detail: String?

    /// For ``reconnectionFailed``: how many reliable messages sent to the peer were never confirmed
    /// by it (the peer may have received some of them, but did not acknowledge them before the link
    /// dropped); they count as failed. `nil` for other reasons.
    public let unconfirmedMessages: Int?

    private init(_ code: Code, detail: String? = nil, unconfirmedMessages: Int? = nil) {
        self.code = code
        self.detail = detail
        self.unconfirmedMessages = unconfirmedMessages
    }

    /// This side called `disconnect()`.
    public static let localDisconnect = DisconnectReason(.localDisconnect)
    /// The peer said goodbye: it left the session or stopped.
    public static let peerDisconnected = DisconnectReason(.peerDisconnected)
    /// The invited peer declined the invitation.
    public static let declined = DisconnectReason(.declined)
    /// The invitation was not answered within its timeout.
    public static let timedOut = DisconnectReason(.timedOut)
    /// The connection closed without a goodbye (the peer's process died or the socket failed).
    public static let connectionLost = DisconnectReason(.connectionLost)
    /// Nothing came from the peer within the liveness timeout (its host or network vanished).
    public static let livenessTimeout = DisconnectReason(.livenessTimeout)
    /// The peer sent something malformed or out of order.
    public static let protocolViolation = DisconnectReason(.protocolViolation)
    /// The peer speaks a protocol version this library does not.
    public static let incompatibleVersion = DisconnectReason(.incompatibleVersion)
    /// The session already holds its maximum number of peers.
    public static let sessionFull = DisconnectReason(.sessionFull)
    /// The peer that answered is not the peer that was invited.
    public static let unexpectedPeer = DisconnectReason(.unexpectedPeer)
    /// The TCP connection could not be made.
    public static let connectionFailed = DisconnectReason(.connectionFailed)
    /// The peer did not complete the handshake in time.
    public static let handshakeTimeout = DisconnectReason(.handshakeTimeout)
    /// The invited side has too many invitations pending and turned this one away.
    public static let busy = DisconnectReason(.busy)
    /// Two connections were made between the same two peers at once (they invited each other); this
    /// one gave way to the other, through which the peer stays in the session.
    public static let duplicate = DisconnectReason(.duplicate)
    /// One side requires encryption and the other's preference is none; the detail says which side insists.
    public static let encryptionRequired = DisconnectReason(.encryptionRequired)
    /// The peer's certificate does not prove the PeerID it claims: its id is derived from another key,
    /// or the certificate is not validly self-signed. Someone posed as that peer.
    public static let identityMismatch = DisconnectReason(.identityMismatch)
    /// The certificate decision refused the peer: a pinned key changed, the application rejected
    /// it, or did not answer in time. The detail names the peer.
    public static let certificateRejected = DisconnectReason(.certificateRejected)
    /// The pairing exchange failed: the invitee's nonce did not match its commitment.
    public static let pairingFailed = DisconnectReason(.pairingFailed)
    /// The TLS handshake failed (no certificate, no common cipher, a broken record, ...).
    public static let securityFailed = DisconnectReason(.securityFailed)

    /// The invited side turned the invitation away because this peer, or its address, sent too many
    /// invitations too fast (see `Advertiser.Configuration`'s invitation limits).
    public static let rateLimited = DisconnectReason(.rateLimited)
    /// The invited side had too many connections in their handshake and closed this one, the oldest,
    /// to make room (a connection flood).
    public static let overloaded = DisconnectReason(.overloaded)

    /// The link dropped and could not be re-established within the reconnection window
    /// (``Session/Configuration/reconnection``); ``unconfirmedMessages`` says how many reliable
    /// messages sent to the peer it never confirmed.
    public static let reconnectionFailed = DisconnectReason(.reconnectionFailed)
    /// The peer refused to resume the link: it does not hold this side any more, or the secret did not match.
    public static let resumeRefused = DisconnectReason(.resumeRefused)
    /// The connection would have been plain, but this side has seen the peer encrypted before (its key
    /// is pinned): someone on the path may have changed a HELLO to strip encryption. The detail names
    /// the peer. Refused whatever either side's preference says.
    public static let downgradeRefused = DisconnectReason(.downgradeRefused)

    /// The same kind of reason with context added.
    ///
    /// - Parameter detail: a sentence for logs and people.
    /// - Returns: a reason equal to `self`, carrying `detail`.
    public func with(detail: String) -> DisconnectReason {
        DisconnectReason(code, detail: detail, unconfirmedMessages: unconfirmedMessages)
    }

    /// The same kind of reason, saying how many reliable messages the peer never confirmed.
    ///
    /// - Parameter count: the number of unconfirmed messages.
    /// - Returns: a reason equal to `self`, carrying `count`.
    package func with(unconfirmedMessages count: Int) -> DisconnectReason {
        DisconnectReason(code, detail: detail, unconfirmedMessages: count)
    }

    /// Reasons are equal when they are of the same kind, whatever their detail.
    public static func == (lhs: DisconnectReason, rhs: DisconnectReason) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the kind of reason.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// The reason in words, with its detail when there is one.
    public var description: String {
        let text: String
        switch code {
        case .localDisconnect: text = "disconnected locally"
        case .peerDisconnected: text = "the peer disconnected"
        case .declined: text = "the invitation was declined"
        case .timedOut: text = "the invitation timed out"
        case .connectionLost: text = "the connection was lost"
        case .livenessTimeout: text = "no sign of life from the peer within the liveness timeout"
        case .protocolViolation: text = "protocol violation"
        case .incompatibleVersion: text = "incompatible protocol version"
        case .sessionFull: text = "the session is full"
        case .unexpectedPeer: text = "an unexpected peer answered"
        case .connectionFailed: text = "the connection could not be made"
        case .handshakeTimeout: text = "the handshake timed out"
        case .busy: text = "the peer has too many pending invitations"
        case .duplicate: text = "replaced by a simultaneous connection between the same peers"
        case .encryptionRequired: text = "encryption is required by one side and refused by the other"
        case .identityMismatch: text = "the peer's certificate does not prove its identity"
        case .certificateRejected: text = "the peer's certificate was rejected"
        case .pairingFailed: text = "the pairing exchange failed"
        case .securityFailed: text = "the TLS handshake failed"
        case .rateLimited: text = "too many invitations from this peer or its address"
        case .overloaded: text = "the peer had too many connections in their handshake"
        case .reconnectionFailed: text = "the link dropped and could not be re-established in time"
        case .resumeRefused: text = "the peer refused to resume the link"
        case .downgradeRefused: text = "refused a plain connection to a peer seen encrypted before"
        }
        guard let detail else { return text }
        // A detail may quote what a peer sent: one line, of bounded length.
        return "\(text): \(LogSafe.escaped(detail, limit: 1024))"
    }

    /// The byte that carries this reason in a GOODBYE or DECLINE frame.
    package var wireValue: UInt8 { code.rawValue }

    /// The reason a GOODBYE or DECLINE frame carries; unknown values read as `peerDisconnected`.
    ///
    /// - Parameter wireValue: the reason byte from the frame.
    package init(wireValue: UInt8) {
        self.init(Code(rawValue: wireValue) ?? .peerDisconnected)
    }
}
