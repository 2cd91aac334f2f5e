import PeerConnectivityCore

/// The names and dimensions of every metric the library records (swift-metrics), in one place.
///
/// The library only uses the swift-metrics API: it never bootstraps a backend, so until the
/// application calls `MetricsSystem.bootstrap`, recording costs a call into a no-op handler.
/// docs/GUIDE.md ("Metrics") lists them for operators.
package enum PeerMetrics {
    /// The prefix of every metric's name.
    package static let prefix = "peerconnectivity_"

    // MARK: - Names

    /// Counter: TCP connections that became active, by ``direction``.
    package static let connectionsOpened = prefix + "connections_opened_total"
    /// Counter: connections that closed after becoming active, by ``reason``.
    package static let connectionsClosed = prefix + "connections_closed_total"
    /// Counter: handshakes that ended established (an invitation accepted or a link resumed), by ``direction``.
    package static let handshakesCompleted = prefix + "handshakes_completed_total"
    /// Timer: from the connection becoming active to its establishment, by ``direction``.
    package static let handshakeDuration = prefix + "handshake_duration_seconds"
    /// Counter: bytes of frames read (after TLS decryption).
    package static let bytesReceived = prefix + "bytes_received_total"
    /// Counter: bytes of frames written (before TLS encryption).
    package static let bytesSent = prefix + "bytes_sent_total"
    /// Counter: frames decoded.
    package static let framesReceived = prefix + "frames_received_total"
    /// Counter: frames written.
    package static let framesSent = prefix + "frames_sent_total"
    /// Counter: dropped links re-established on a new connection (RESUME, RESUMED), counted on both sides.
    package static let linksResumed = prefix + "links_resumed_total"
    /// Counter: dropped links a session gave up on (reconnection window over, or resume refused).
    package static let linksGivenUp = prefix + "links_given_up_total"
    /// Counter: invitations (and resumes) this side turned away with DECLINE, by ``reason``.
    package static let invitationsRefused = prefix + "invitations_refused_total"

    // MARK: - Dimensions

    /// The dimension that says who opened a connection: ``inbound`` or ``outbound``.
    package static let direction = "direction"
    /// The peer connected to this side (an invitee).
    package static let inbound = "inbound"
    /// This side connected to the peer (an inviter, or a resumer).
    package static let outbound = "outbound"
    /// The dimension that names a ``DisconnectReason`` (see ``reasonName(_:)``).
    package static let reason = "reason"

    /// Every reason's name, the value of the ``reason`` dimension: a bounded set, so a hostile
    /// peer cannot grow the number of time series.
    package static let reasonNames: [String] = [
        "local_disconnect", "peer_disconnected", "declined", "timed_out", "connection_lost",
        "liveness_timeout", "protocol_violation", "incompatible_version", "session_full", "unexpected_peer",
        "connection_failed", "handshake_timeout", "busy", "duplicate", "encryption_required",
        "identity_mismatch", "certificate_rejected", "pairing_failed", "security_failed", "rate_limited",
        "overloaded", "reconnection_failed", "resume_refused", "downgrade_refused", "other",
    ]

    /// The name of a reason's kind, its detail left out: one of ``reasonNames``.
    ///
    /// - Parameter reason: a disconnect reason.
    /// - Returns: its name in snake case ("rate_limited"), or "other" for a kind this list lacks.
    package static func reasonName(_ reason: DisconnectReason) -> String {
        switch reason {
        case .localDisconnect: "local_disconnect"
        case .peerDisconnected: "peer_disconnected"
        case .declined: "declined"
        case .timedOut: "timed_out"
        case .connectionLost: "connection_lost"
        case .livenessTimeout: "liveness_timeout"
        case .protocolViolation: "protocol_violation"
        case .incompatibleVersion: "incompatible_version"
        case .sessionFull: "session_full"
        case .unexpectedPeer: "unexpected_peer"
        case .connectionFailed: "connection_failed"
        case .handshakeTimeout: "handshake_timeout"
        case .busy: "busy"
        case .duplicate: "duplicate"
        case .encryptionRequired: "encryption_required"
        case .identityMismatch: "identity_mismatch"
        case .certificateRejected: "certificate_rejected"
        case .pairingFailed: "pairing_failed"
        case .securityFailed: "security_failed"
        case .rateLimited: "rate_limited"
        case .overloaded: "overloaded"
        case .reconnectionFailed: "reconnection_failed"
        case .resumeRefused: "resume_refused"
        case .downgradeRefused: "downgrade_refused"
        default: "other"
        }
    }
}
