import PeerConnectivity

/// Why a run failed, in a user's words, with what to check: for the reasons people meet between two real
/// hosts (nothing listening, a firewall, no multicast, a full reflector, mismatched encryption).
enum RunFailure {
    /// The sentence for `error`, as the runner prints it and records it in the document.
    ///
    /// - Parameters:
    ///   - error: what the run threw.
    ///   - configuration: what it was trying to reach.
    /// - Returns: what happened and what to check.
    static func explain(_ error: any Error, configuration: RunnerConfiguration) -> String {
        let target: String
        switch configuration.target {
        case .direct(let host, let port): target = ConnectionEndpoints.hostPort(host, port)
        case .discover(let name): target = name.map { "the reflector \"\($0)\"" } ?? "a reflector"
        }
        if let error = error as? BenchError { return error.message }
        guard let invitation = error as? InvitationError, let reason = invitation.reason else { return "\(error)" }
        let detail = reason.detail ?? ""
        switch reason {
        case .connectionFailed where detail.contains("refused"):
            return "nothing accepts connections at \(target): is the reflector running there (its --port), "
                + "and is that TCP port open in its firewall?"
        case .connectionFailed where detail.contains("timed out") || detail.contains("unreachable"):
            return "no answer from \(target): the host may be down or unreachable, or a firewall drops the "
                + "connection (open the reflector's TCP port, 7447 by default)"
        case .connectionFailed:
            return "could not connect to \(target): \(detail)"
        case .timedOut:
            return "\(target) did not answer the invitation in time (--connect-timeout): is it a reflector, and "
                + "not overloaded?"
        case .busy:
            return "the reflector serves as many runners as it takes (its --max-runners or "
                + "--max-runners-per-address): try again when one is done"
        case .rateLimited:
            return "the reflector turned the invitation away: too many from this host too fast (its "
                + "--invitation-rate); wait a moment"
        case .encryptionRequired:
            return "the reflector and this runner disagree on encryption (\(detail)): give both the same "
                + "--encryption"
        case .downgradeRefused:
            return "refused a plain connection to a reflector seen encrypted before: someone on the path may be "
                + "stripping encryption (\(detail))"
        case .incompatibleVersion:
            return "the reflector speaks another protocol version (\(detail)): run the same version on both hosts"
        default:
            return "the invitation failed: \(reason)"
        }
    }
}
