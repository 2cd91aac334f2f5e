import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Joining by invitation: this side dials and invites a peer, or accepts a peer's invitation.
extension SessionRuntime {
    /// Dials `host:port` and invites the peer there (see ``invite(expectedPeer:to:context:timeout:reservingFirst:)``).
    func invite(
        expectedPeer: PeerID?,
        host: String,
        port: Int,
        context: Data?,
        timeout: Duration,
        reservingFirst: Bool = true
    ) async throws -> PeerID {
        try await invite(
            expectedPeer: expectedPeer,
            to: DialTarget(host: host, port: port),
            context: context,
            timeout: timeout,
            reservingFirst: reservingFirst
        )
    }

    /// Dials `target` and invites the peer there.
    ///
    /// - Parameter reservingFirst: whether `expectedPeer` is held as `connecting` from the start (an
    ///   invitation the application makes); `false` for the mesh's dials, which show the member
    ///   `connecting` only once it has answered, so that a dial to a member that cannot be reached
    ///   changes no state.
    func invite(
        expectedPeer: PeerID?,
        to target: DialTarget,
        context: Data?,
        timeout: Duration,
        reservingFirst: Bool = true
    ) async throws -> PeerID {
        try await invite(
            expectedPeer: expectedPeer,
            context: context,
            timeout: timeout,
            reservingFirst: reservingFirst,
            describing: "\(target)"
        ) { invitation in
            try await ConnectionDialer.dial(
                target,
                localPeer: peer,
                invitation: invitation,
                configuration: connectionConfiguration,
                group: eventLoop,
                delegate: self
            )
        }
    }

    /// Invites the peer at the end of the connection `open` makes, with the invitation it is given.
    ///
    /// - Parameters:
    ///   - describing: names where `open` goes, for the error when it fails.
    ///   - open: makes the connection, whose delegate is this session, as inviter with the invitation.
    func invite(
        expectedPeer: PeerID?,
        context: Data?,
        timeout: Duration,
        reservingFirst: Bool,
        describing target: String,
        open: (ConnectionStateMachine.Invitation) async throws -> Connection
    ) async throws -> PeerID {
        let context = context ?? Data()
        guard context.count <= WireProtocol.maximumContextLength else {
            throw InvitationError.failed(
                peer: expectedPeer,
                reason: .protocolViolation.with(
                    detail: "context of \(context.count) bytes exceeds \(WireProtocol.maximumContextLength)"
                )
            )
        }
        let reserved = reservingFirst ? expectedPeer : nil
        if let reserved {
            try withPeers { table throws(SessionError) in try table.reserve(reserved) }
        } else if let expectedPeer, state(of: expectedPeer) != .notConnected {
            throw SessionError.alreadyInSession(expectedPeer)
        } else if peers.withLock({ $0.count }) >= configuration.maximumPeers {
            throw SessionError.sessionFull(limit: configuration.maximumPeers)
        }
        await listenerBound()
        let invitation = ConnectionStateMachine.Invitation(
            expectedPeer: expectedPeer,
            context: ByteBuffer(bytes: context),
            timeout: TimeAmount(timeout),
            maximumMessageLength: configuration.maximumMessageLength
        )
        let connection: Connection
        do {
            connection = try await open(invitation)
        } catch {
            let reason = DisconnectReason.connectionFailed.with(detail: "\(target): \(error)")
            if let reserved { release(reserved, connection: nil, reason: reason) }
            throw InvitationError.failed(peer: expectedPeer, reason: reason)
        }
        if let expectedPeer = reserved {
            // Attached, or held by another connection (its invitation won), or the place is gone: this
            // connection closed already (its own error, below, says why) or the session let the place go.
            let attached = peers.withLock { table -> Bool? in
                table.attach(connection, to: expectedPeer) ? true : table.all[expectedPeer] == nil ? nil : false
            }
            switch attached {
            case true?:
                break
            case false?:
                connection.close(.localDisconnect.with(detail: "the peer joined through its own invitation"))
                try await waitUntilConnected(expectedPeer)
                return expectedPeer
            case nil:
                connection.close(.localDisconnect.with(detail: "the session gave up the invitation's place"))
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await connection.established.get()
            } onCancel: {
                connection.close(.localDisconnect.with(detail: "the invitation was cancelled"))
            }
        } catch let error as ConnectionClosedError {
            switch refusals.withLock({ $0.removeValue(forKey: ObjectIdentifier(connection)) }) {
            case .error(let error): throw error
            case .lostTieBreak(let peer):
                try await waitUntilConnected(peer)
                return peer
            case nil: break
            }
            if let peer = error.peer ?? expectedPeer, peers.withLock({ $0.isHeld(peer, overAnotherThan: connection) }) {
                // Both invited each other and the peer's invitation won: it joins through that one.
                try await waitUntilConnected(peer)
                return peer
            }
            // A peer held from the start goes with its dial, whoever answered (another peer at its old address
            // leaves the place held by nothing); one that was not, only if it answered.
            if let peer = reserved ?? error.peer { release(peer, connection: connection, reason: error.reason) }
            throw InvitationError.failed(peer: error.peer ?? expectedPeer, reason: error.reason)
        }
    }

    /// The application accepted the invitation that arrived on `connection` into this session (an
    /// advertiser's ``Invitation/accept(into:)``, or a join in the process): a plain connection into a
    /// session that requires encryption, and a peer the session cannot take, are declined, and the
    /// inviter is told why.
    ///
    /// - Throws: ``SessionError`` when the session is full or holds the peer; ``InvitationError`` when
    ///   the connection is plain and encryption is required, or the invitation is no longer pending.
    func acceptInvitation(on connection: Connection, from peer: PeerID) async throws {
        if encryptionPreference == .required, !connection.securityInfo.isEncrypted {
            let reason = DisconnectReason.encryptionRequired.with(
                detail: "the session requires encryption and the invitation came over a plain connection"
            )
            connection.decline(reason)
            throw InvitationError.failed(peer: peer, reason: reason)
        }
        do {
            try await accept(connection, from: peer)
        } catch let error as SessionError {
            connection.decline(error.declineReason)
            throw error
        }
    }

    func accept(_ connection: Connection, from peer: PeerID) async throws {
        let admission = try withPeers { table throws(SessionError) in
            try table.invitation(from: peer, on: connection)
        }
        switch admission {
        case .admitted:
            break
        case .supersedes(let ourDial):
            ourDial?.close(.duplicate.with(detail: "the peer's simultaneous invitation won the tie-break"))
        case .duplicate:
            // Left unanswered until ours is through: by then the peer has closed it for ours.
            defer { connection.decline(.duplicate.with(detail: "both invited each other; the other invitation won")) }
            try await waitUntilConnected(peer)
            return
        }
        await listenerBound()
        do {
            // Accepted by an advertiser, with its limits: this session's apply from now on.
            if let lowWatermark = configuration.notSentLowWatermark {
                try await connection.limitUnsentBytes(to: lowWatermark, gated: configuration.gatesUnsentBytes)
            }
            if let congestionControl = configuration.congestionControl {
                await connection.setCongestionControl(congestionControl)
            }
            try await connection.accept(
                delegate: self,
                keepaliveInterval: connectionConfiguration.keepaliveInterval,
                livenessTimeout: connectionConfiguration.livenessTimeout,
                maximumMessageLength: configuration.maximumMessageLength
            )
        } catch let error as ConnectionClosedError {
            if peers.withLock({ $0.isHeld(peer, overAnotherThan: connection) }) {
                // Our own simultaneous invitation won the tie-break meanwhile: the peer joins through it.
                try await waitUntilConnected(peer)
                return
            }
            release(peer, connection: connection, reason: error.reason)
            throw InvitationError.notPending(peer: peer, reason: error.reason)
        }
    }

    /// Waits until the session's listener is bound (or failed to bind), so that a new link's peer learns
    /// its port together with the link's secret.
    private func listenerBound() async {
        await listenerBinding.withLock { $0 }?.value
    }
}
