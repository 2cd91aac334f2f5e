import Foundation
import Logging
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Full mesh, as MPC: the I/O of ``MeshStateMachine``, which decides who tells whom about which
/// member, who dials, and which connections to the session's listener it accepts. This file binds the
/// listener, sends SESSION-LISTENER and MEMBERS, dials, accepts and declines as the machine says.
extension SessionRuntime {
    /// How long a connection to the session's listener waits for a member to introduce its peer.
    static let introductionGracePeriod = Duration.seconds(3)
    /// Dials to introduced members that one member's introductions may have under way at once; more
    /// introductions wait for the next MEMBERS.
    static let maximumDialsPerIntroducer = 4

    /// Binds the session's listener in the background; connections established meanwhile are told
    /// its port once it is bound.
    ///
    /// - Returns: the binding, which ``invite(expectedPeer:host:port:context:timeout:)`` and ``accept(_:from:)``
    ///   wait for: the port then goes out right after RESUME-SECRET, so a link is resumable at once.
    func startMesh() -> Task<Void, Never> {
        let localPeer = peer
        let configuration = connectionConfiguration
        let eventLoop = self.eventLoop
        return Task { [weak self] in
            let listener = try? await ConnectionListener.bind(
                host: DualStack.anyAddress,
                port: 0,
                localPeer: localPeer,
                configuration: configuration,
                handshakeLimits: HandshakeAdmission.Limits(maximum: 16, maximumPerAddress: 16),
                group: eventLoop,
                delegate: self ?? MeshRefuser()
            )
            guard let listener else { return }
            guard let self else {
                await listener.close()
                return
            }
            self.listenerBound(listener)
        }
    }

    private func listenerBound(_ listener: ConnectionListener) {
        let waiting = mesh.withLock { state -> [Connection]? in
            guard let waiting = state.machine.listenerBound(port: listener.port) else { return nil }
            state.listener = listener
            return waiting
        }
        guard let waiting else {
            Task { await listener.close() }
            return
        }
        for connection in waiting {
            connection.sendControl(.sessionListener(port: UInt16(listener.port)))
        }
    }

    /// Closes the session's listener.
    func stopMesh() {
        let listener = mesh.withLock { state -> ConnectionListener? in
            state.machine.close()
            defer { state.listener = nil }
            return state.listener
        }
        if let listener { Task { await listener.close() } }
    }

    /// A peer is connected: tell it where this session accepts members.
    func meshEstablished(_ connection: Connection) {
        // Reconnection dials the peer's session listener too, so it is announced with either.
        guard configuration.joinsMesh || configuration.reconnection != nil else { return }
        if let port = mesh.withLock({ $0.machine.established(connection) }) {
            connection.sendControl(.sessionListener(port: UInt16(port)))
        }
    }

    /// A connection closed: forget what was learned over it.
    func meshClosed(_ connection: Connection) {
        mesh.withLock { $0.machine.closed(connection) }
    }

    /// SESSION-LISTENER or MEMBERS from a connected peer.
    func meshReceived(_ frame: Frame, on connection: Connection, from sender: PeerID) {
        guard configuration.joinsMesh else { return }
        switch frame {
        case .sessionListener(let port):
            guard let address = connection.remoteIPAddress.flatMap(Platform.addressBytes) else { return }
            learned(Frame.Member(peer: sender, address: address, port: port), over: connection)
        case .members(let members):
            // An introduction makes this side dial the address it names: only a peer that proved its key
            // (TLS and the binding rule) may make one.
            guard connection.securityInfo.isEncrypted else {
                connectionConfiguration.warnings.warn(
                    "ignoring MEMBERS from \(sender): introductions are accepted only over an encrypted connection",
                    to: configuration.logger
                )
                return
            }
            for member in members where member.peer != sender {
                introduce(member, by: connection)
            }
        default:
            break
        }
    }

    /// `member`'s listener is known: tell it about the other members, and them about it.
    private func learned(_ member: Frame.Member, over connection: Connection) {
        let connected = Set(peers(in: .connected))
        let introductions = mesh.withLock { state in
            state.machine.learned(member, over: connection, isConnected: connected.contains)
        }
        if !introductions.toNewcomer.isEmpty {
            connection.sendControl(.members(introductions.toNewcomer))
        }
        for other in introductions.newcomerTo {
            if let otherConnection = try? self.connection(to: other) {
                otherConnection.sendControl(.members([member]))
            }
        }
    }

    /// A member told this side about `member`: accept it if it is knocking already, dial it if the
    /// machine says so.
    private func introduce(_ member: Frame.Member, by introducer: Connection) {
        let isHeld = state(of: member.peer) != .notConnected
        switch mesh.withLock({ $0.machine.introduced(member, by: introducer, isHeld: isHeld) }) {
        case .accept(let knocking):
            Task { try? await accept(knocking, from: member.peer) }
        case .dial(let member):
            dial(member, interface: introducer.localInterfaceIndex)
        case .deferred:
            configuration.logger.debug(
                "mesh: not dialing \(member.peer) yet: enough dials under way for its introducer"
            )
        case .none:
            break
        }
    }

    /// Dials `member`'s listener; when it fails, tries again as the machine says (`MeshStateMachine+Healing.swift`).
    ///
    /// - Parameter interface: the interface the introduction came over, for a link-local address; `nil`
    ///   (a retry, a redial) tries every interface with a link-local address.
    private func dial(_ member: Frame.Member, interface: UInt32? = nil) {
        let logger = configuration.logger
        guard let host = Platform.addressString(member.address, interface: interface ?? 0) else {
            _ = mesh.withLock { $0.machine.dialEnded(member.peer, .failed(.connectionFailed)) }
            return
        }
        Task {
            let outcome: MeshStateMachine<Connection>.DialOutcome
            do {
                _ = try await invite(
                    expectedPeer: member.peer,
                    host: host,
                    port: Int(member.port),
                    context: nil,
                    timeout: .seconds(10),
                    reservingFirst: false
                )
                outcome = .connected
            } catch let error as SessionError where error == .alreadyInSession(member.peer) {
                outcome = .held
            } catch {
                let reason = (error as? InvitationError)?.reason ?? .connectionFailed.with(detail: "\(error)")
                logger.debug("mesh: could not connect to \(member.peer) at \(host):\(member.port): \(reason)")
                outcome = .failed(reason)
            }
            dialEnded(member, outcome)
        }
    }

    private func dialEnded(_ member: Frame.Member, _ outcome: MeshStateMachine<Connection>.DialOutcome) {
        guard let retry = mesh.withLock({ $0.machine.dialEnded(member.peer, outcome) }) else {
            if case .failed(let reason) = outcome, !isShutDown {
                configuration.logger.warning("mesh: could not reach member \(member.peer): \(reason)")
            }
            return
        }
        configuration.logger.debug(
            "mesh: trying \(member.peer) again in \(retry.delay) (attempt \(retry.attempt) of \(MeshStateMachine<Connection>.maximumDialAttempts))"
        )
        eventLoop.scheduleTask(in: TimeAmount(retry.delay)) { [weak self] in
            guard let self else { return }
            let isHeld = self.state(of: retry.peer) != .notConnected
            if let member = self.mesh.withLock({
                $0.machine.retryDue(retry.peer, generation: retry.generation, isHeld: isHeld)
            }) {
                self.dial(member)
            }
        }
    }

    /// The session no longer holds `peer`: a member whose link was lost is dialled again.
    func meshPeerLost(_ peer: PeerID, reason: DisconnectReason) {
        guard configuration.joinsMesh, let member = mesh.withLock({ $0.machine.peerLost(peer, reason: reason) }) else {
            return
        }
        configuration.logger.debug("mesh: \(peer) was lost (\(reason)); dialing it again")
        dial(member)
    }

    /// A connection to the session's listener invites this side: accept it if a member introduced
    /// the peer, else hold it for a moment.
    func meshInvitation(_ connection: Connection, from inviter: PeerID) {
        switch mesh.withLock({ $0.machine.invitation(from: inviter, on: connection) }) {
        case .accept:
            Task { try? await accept(connection, from: inviter) }
        case .hold(let replaced):
            replaced?.decline(.declined.with(detail: "replaced by a newer connection"))
            connection.eventLoop.scheduleTask(in: TimeAmount(Self.introductionGracePeriod)) { [weak self] in
                guard self?.mesh.withLock({ $0.machine.holdExpired(inviter, connection: connection) }) == true else {
                    return
                }
                connection.decline(.declined.with(detail: "no member of this session introduced \(inviter)"))
            }
        }
    }
}

/// Declines everything: the event handler of a listener whose session went away while it was bound.
private final class MeshRefuser: ConnectionDelegate {
    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .invitation: connection.decline(.declined)
        default: _ = event.refuseResumption(on: connection)
        }
        return .more
    }
}
