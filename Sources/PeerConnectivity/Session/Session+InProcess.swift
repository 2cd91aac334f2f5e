import Foundation

extension Session {
    /// Joins `other`, a session of this process, over a socket pair: this session invites, `other`
    /// accepts. The public face is `PeerConnectivityTesting`'s `Session.connectInProcess(to:context:timeout:)`.
    ///
    /// - Parameters:
    ///   - other: the session that accepts.
    ///   - context: the invitation's context.
    ///   - timeout: how long the handshake may take.
    /// - Throws: ``InvitationError`` or ``SessionError`` as an invitation and its acceptance throw them.
    package func joinInProcess(_ other: Session, context: Data?, timeout: Duration) async throws {
        try await runtime.joinInProcess(other.runtime, context: context, timeout: timeout)
    }
}
