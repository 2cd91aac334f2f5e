import Foundation
import Logging
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Full mesh, as MPC: a peer accepted into a session that holds others is connected to every member.
///
/// Each session listens on a TCP port of its own for other members, and tells each connected peer
/// that port (SESSION-LISTENER). When a member M learns the port of a peer P, M tells P about its
/// other members, and tells them about P (MEMBERS, with addresses as M sees them). Of two members
/// that lack a connection to each other, the one with the lower peer id dials the other's listener;
/// the listener accepts only peers a member has introduced (an invitation that arrives before its
/// introduction waits up to ``SessionCore/introductionGracePeriod``).
extension SessionCore {
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
                host: "0.0.0.0",
                port: 0,
                localPeer: localPeer,
                configuration: configuration,
                handshakeLimits: HandshakeAdmission.Limits(maximum: 16, maximumPerAddress: 16),
                group: eventLoop,
                handler: self ?? MeshRefuser()
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
            guard !state.closed else { return nil }
            state.listener = listener
            defer { state.waiting = [] }
            return state.waiting
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
            state.closed = true
            defer { state.listener = nil }
            return state.listener
        }
        if let listener { Task { await listener.close() } }
    }

    /// A peer is connected: tell it where this session accepts members.
    func meshEstablished(_ connection: Connection) {
        // Reconnection dials the peer's session listener too, so it is announced with either.
        guard configuration.joinsMesh || configuration.reconnection != nil else { return }
        let port = mesh.withLock { state -> Int? in
            guard let listener = state.listener else {
                if !state.closed { state.waiting.append(connection) }
                return nil
            }
            return listener.port
        }
        if let port { connection.sendControl(.sessionListener(port: UInt16(port))) }
    }

    /// A connection closed: forget what was learned over it.
    func meshClosed(_ connection: Connection) {
        let key = ObjectIdentifier(connection)
        mesh.withLock { state in
            state.waiting.removeAll { $0 === connection }
            for (peer, endpoint) in state.endpoints where endpoint.connection == key {
                state.endpoints[peer] = nil
            }
            for (peer, pending) in state.pending where pending === connection {
                state.pending[peer] = nil
            }
            for (peer, introduction) in state.introduced where introduction.introducer == key {
                state.introduced[peer] = nil
            }
        }
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
            for member in members where member.peer != peer && member.peer != sender {
                introduce(member, by: connection)
            }
        default:
            break
        }
    }

    /// `member`'s listener is known: tell it about the other members, and them about it.
    private func learned(_ member: Frame.Member, over connection: Connection) {
        let connected = Set(peers(in: .connected))
        let others = mesh.withLock { state -> [Frame.Member] in
            state.endpoints[member.peer] = (member, ObjectIdentifier(connection))
            return state.endpoints.values.map(\.member).filter {
                $0.peer != member.peer && connected.contains($0.peer)
            }
        }
        if !others.isEmpty {
            connection.sendControl(.members(Array(others.prefix(Int(UInt8.max)))))
        }
        for other in others {
            if let otherConnection = try? self.connection(to: other.peer) {
                otherConnection.sendControl(.members([member]))
            }
        }
    }

    /// A member told this side about `member`: connect to it if it lacks a connection, as the
    /// lower peer id; accept it if it is already knocking.
    private func introduce(_ member: Frame.Member, by introducer: Connection) {
        let introducerKey = ObjectIdentifier(introducer)
        let knocking = mesh.withLock { state -> Connection? in
            state.introduced[member.peer] = (member, introducerKey)
            return state.pending.removeValue(forKey: member.peer)
        }
        if let knocking {
            Task { try? await accept(knocking, from: member.peer) }
            return
        }
        guard state(of: member.peer) == .notConnected, PeerTable.winsTieBreak(inviter: peer, over: member.peer),
            let host = Platform.addressString(member.address)
        else { return }
        let mayDial = mesh.withLock { state -> Bool in
            guard state.dialsInFlight[introducerKey, default: 0] < Self.maximumDialsPerIntroducer else { return false }
            state.dialsInFlight[introducerKey, default: 0] += 1
            return true
        }
        guard mayDial else {
            configuration.logger.debug(
                "mesh: not dialing \(member.peer) yet: enough dials under way for its introducer"
            )
            return
        }
        let logger = configuration.logger
        Task {
            defer {
                mesh.withLock { state in
                    let left = state.dialsInFlight[introducerKey, default: 1] - 1
                    state.dialsInFlight[introducerKey] = left > 0 ? left : nil
                }
            }
            do {
                _ = try await invite(
                    expectedPeer: member.peer,
                    host: host,
                    port: Int(member.port),
                    context: nil,
                    timeout: .seconds(10)
                )
            } catch {
                logger.debug("mesh: could not connect to \(member.peer) at \(host):\(member.port): \(error)")
            }
        }
    }

    /// A connection to the session's listener invites this side: accept it if a member introduced
    /// the peer, else hold it for a moment.
    func meshInvitation(_ connection: Connection, from inviter: PeerID) {
        let introduced = mesh.withLock { state -> Bool in
            if state.introduced[inviter] != nil { return true }
            state.pending[inviter]?.decline(.declined.with(detail: "replaced by a newer connection"))
            state.pending[inviter] = connection
            return false
        }
        if introduced {
            Task { try? await accept(connection, from: inviter) }
            return
        }
        connection.eventLoop.scheduleTask(in: TimeAmount(Self.introductionGracePeriod)) { [weak self] in
            let stale = self?.mesh.withLock { state -> Bool in
                guard state.pending[inviter] === connection else { return false }
                state.pending[inviter] = nil
                return true
            }
            if stale == true {
                connection.decline(.declined.with(detail: "no member of this session introduced \(inviter)"))
            }
        }
    }
}

/// Declines everything: the event handler of a listener whose session went away while it was bound.
private final class MeshRefuser: ConnectionEventHandler {
    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .invitation: connection.decline(.declined)
        default: _ = event.refuseResumption(on: connection)
        }
        return .more
    }
}
