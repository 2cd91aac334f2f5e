import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Joining two sessions of one process without a network: a socket pair instead of a dial, this
/// session the inviter, `other` the invitee that accepts as an advertiser's application would.
extension SessionRuntime {
    /// Invites `other` over a new socket pair and has it accept; returns once both hold the link.
    ///
    /// - Throws: what ``invite(expectedPeer:context:timeout:reservingFirst:describing:open:)`` throws,
    ///   or ``InvitationError`` when `other` cannot take this session's peer.
    func joinInProcess(_ other: SessionRuntime, context: Data?, timeout: Duration) async throws {
        let invitee = PendingInvitation()
        // Both ends of the pair take as long for the handshake as the join may take: nothing on the way can
        // be slow but the process itself, which an app's tests may load heavily.
        var inviterConfiguration = connectionConfiguration
        var inviteeConfiguration = other.connectionConfiguration
        let joinTimeout = TimeAmount(timeout)
        inviterConfiguration.handshakeTimeout = max(inviterConfiguration.handshakeTimeout, joinTimeout)
        inviteeConfiguration.handshakeTimeout = max(inviteeConfiguration.handshakeTimeout, joinTimeout)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A connection that closes before its invitation arrives: the inviter's error says why.
                guard let (connection, peer) = try? await invitee.arrival() else { return }
                try await other.acceptInvitation(on: connection, from: peer)
            }
            do {
                _ = try await invite(
                    expectedPeer: other.peer,
                    context: context,
                    timeout: timeout,
                    reservingFirst: true,
                    describing: "\(other.peer) in this process"
                ) { invitation in
                    let (connection, _) = try await SocketPairConnector.connect(
                        SocketPairConnector.End(
                            localPeer: peer,
                            role: .inviter(invitation),
                            configuration: inviterConfiguration,
                            eventLoop: eventLoop,
                            delegate: self
                        ),
                        SocketPairConnector.End(
                            localPeer: other.peer,
                            role: .invitee,
                            configuration: inviteeConfiguration,
                            eventLoop: other.eventLoop,
                            delegate: invitee
                        )
                    )
                    return connection
                }
            } catch {
                group.cancelAll()
                // The accepting side's refusal (full, or holding this peer already) says more than the
                // inviter's "declined".
                do { try await group.next() } catch let refusal as SessionError { throw refusal } catch {}
                throw error
            }
            try await group.next()
        }
    }
}

/// The invitee end of an in-process join until its session accepts: it hands the invitation to the
/// task waiting for it, and refuses anything else (a RESUME, which an in-process end never receives).
private final class PendingInvitation: ConnectionDelegate, Sendable {
    private enum State {
        case waiting(CheckedContinuation<(Connection, PeerID), any Error>?)
        case arrived(Result<(Connection, PeerID), any Error>)
        case taken
    }

    private let state = Mutex(State.waiting(nil))

    /// The invitation's connection and peer, once it arrives.
    ///
    /// - Throws: ``ConnectionClosedError`` when the connection closed first; `CancellationError` when the
    ///   waiting task is cancelled.
    func arrival() async throws -> (Connection, PeerID) {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<(Connection, PeerID), any Error>? in
                    switch state {
                    case .waiting:
                        state = .waiting(continuation)
                        return nil
                    case .arrived(let result):
                        state = .taken
                        return result
                    case .taken:
                        return .failure(CancellationError())
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            settle(.failure(CancellationError()))
        }
    }

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .invitation(let peer, _, _):
            settle(.success((connection, peer)))
        case .closed(let peer, let reason):
            settle(.failure(ConnectionClosedError(reason: reason, peer: peer)))
        default:
            _ = event.refuseResumption(on: connection)
        }
        return .more
    }

    /// Hands `result` to the waiting task, or keeps it for the task to come; only the first counts.
    private func settle(_ result: Result<(Connection, PeerID), any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<(Connection, PeerID), any Error>? in
            switch state {
            case .waiting(let continuation?):
                state = .taken
                return continuation
            case .waiting(nil):
                state = .arrived(result)
                return nil
            case .arrived, .taken:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
