import Crypto
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// The checked paths: probes, their answers, the timer and the verdict of each connection whose peer
/// probes. Each event is fed to the connection's ``DatagramPathStateMachine`` under the lock; the probe,
/// the timer and the log line it asks for are carried out after.
extension SessionDatagrams {
    typealias Step = DatagramPathStateMachine.Step

    /// Starts checking the path of `connection` once everything a probe needs is there: the socket, the
    /// peer's endpoint and, on an encrypted connection, its key. Does nothing for a peer that does not probe,
    /// or a path started already.
    func startPath(on connection: Connection) {
        let id = ObjectIdentifier(connection)
        let encrypted = connection.securityInfo.isEncrypted
        let ready = state.withLock { state -> Bool in
            guard !state.closed, state.probing.contains(id), state.paths[id] == nil, state.endpoint != nil,
                let target = state.targets[id], let token = state.localTokens[id], let peer = state.senders[token],
                !encrypted || state.peerKeys[id] != nil
            else { return false }
            state.probeRoutes[DatagramProbe.token(for: target.token)] = ProbeRoute(connection: id, isOurs: false)
            state.paths[id] = Path(connection: connection, peer: peer.id)
            return true
        }
        if ready { drive(id) { machine, now in machine.start(now: now) } }
    }

    /// Where the path to the peer of `connection` stands.
    func pathReport(on connection: Connection) -> DatagramPathReport {
        let id = ObjectIdentifier(connection)
        let now = NIODeadline.now().uptimeNanoseconds
        return state.withLock { state in
            guard state.endpoint != nil else { return state.unavailable ? .unavailable : .pending }
            if let path = state.paths[id] { return .checked(path.machine.summary(now: now)) }
            return state.probing.contains(id) || state.targets[id] == nil ? .pending : .unchecked
        }
    }

    /// A datagram under a probe token: a probe of the peer's (answered to where it came from) or the answer
    /// to one of ours.
    func probeReceived(_ bytes: ByteBuffer, token: UInt64, from address: SocketAddress) {
        let found = state.withLock { state -> (ProbeRoute, String, SymmetricKey?, DatagramEndpoint)? in
            guard let route = state.probeRoutes[token], let local = state.localTokens[route.connection],
                let peer = state.senders[local], let endpoint = state.endpoint
            else { return nil }
            // Probes to us are sealed with our key, as messages are; answers to ours with the peer's.
            return (route, peer.address, route.isOurs ? peer.key : state.peerKeys[route.connection], endpoint)
        }
        guard let (route, peerAddress, key, endpoint) = found, peerAddress == Platform.addressText(address),
            let body = Self.opened(Data(buffer: bytes, byteTransferStrategy: .copy), token: token, key: key),
            let probe = DatagramProbe(body)
        else {
            state.withLock { $0.statistics.rejected += 1 }
            return
        }
        switch (probe, route.isOurs) {
        case (.probe(let sequence), true):
            let answer = Self.datagram(
                DatagramProbe.answer(sequence: sequence).bytes,
                token: token,
                key: key,
                allocator: path(route.connection)?.connection.allocator ?? ByteBufferAllocator()
            )
            if let answer, endpoint.send(answer, to: address) {
                state.withLock { $0.statistics.answersSent += 1 }
            }
            drive(route.connection) { machine, _ in
                machine.peerProbeArrived(sequence: sequence)
                return Step()
            }
        case (.answer(let sequence), false):
            drive(route.connection) { machine, now in machine.answerArrived(sequence: sequence, now: now) }
        default:
            state.withLock { $0.statistics.rejected += 1 }
        }
    }

    /// Feeds one event to a path's machine under the lock, then carries out its step: the timer, the
    /// probe and the verdict's log line.
    private func drive(_ id: ObjectIdentifier, _ event: (inout DatagramPathStateMachine, UInt64) -> Step) {
        let now = NIODeadline.now().uptimeNanoseconds
        let work = state.withLock { state -> (Step, Path, (any EventLoop)?, Scheduled<Void>?)? in
            guard var path = state.paths[id] else { return nil }
            let step = event(&path.machine, now)
            var replaced: Scheduled<Void>?
            if step.timer != nil {
                // A timer armed before this step is stale, whether or not it has fired.
                path.timerGeneration += 1
                replaced = path.timer
                path.timer = nil
            }
            state.paths[id] = path
            return (step, path, state.eventLoop, replaced)
        }
        guard let (step, path, eventLoop, replaced) = work else { return }
        replaced?.cancel()
        if case .arm(let deadline) = step.timer, let eventLoop {
            let generation = path.timerGeneration
            let timer = eventLoop.scheduleTask(deadline: .uptimeNanoseconds(deadline)) { [weak self] () -> Void in
                self?.timerFired(id, generation: generation)
            }
            let stale = state.withLock { state -> Bool in
                guard state.paths[id]?.timerGeneration == generation else { return true }
                state.paths[id]?.timer = timer
                return false
            }
            if stale { timer.cancel() }
        }
        if let sequence = step.probe { sendProbe(sequence, on: path.connection) }
        if let verdict = step.verdict { report(verdict, of: path, now: now) }
    }

    private func path(_ id: ObjectIdentifier) -> Path? {
        state.withLock { $0.paths[id] }
    }

    private func timerFired(_ id: ObjectIdentifier, generation: Int) {
        let current = state.withLock { $0.paths[id]?.timerGeneration == generation }
        guard current else { return }
        drive(id) { machine, now in machine.timerFired(now: now) }
    }

    private func sendProbe(_ sequence: UInt32, on connection: Connection) {
        let id = ObjectIdentifier(connection)
        let found = state.withLock { state -> (DatagramEndpoint, SocketAddress, UInt64, SymmetricKey?)? in
            guard let endpoint = state.endpoint, let target = state.targets[id] else { return nil }
            return (endpoint, target.address, DatagramProbe.token(for: target.token), state.peerKeys[id])
        }
        guard let (endpoint, address, token, key) = found,
            let datagram = Self.datagram(
                DatagramProbe.probe(sequence: sequence).bytes,
                token: token,
                key: key,
                allocator: connection.allocator
            )
        else { return }
        // A probe the socket cannot take now is one more lost: the machine's next one follows.
        if endpoint.send(datagram, to: address) {
            state.withLock { $0.statistics.probesSent += 1 }
        }
    }

    private func report(_ verdict: DatagramPathStateMachine.Verdict, of path: Path, now: UInt64) {
        guard let logger = state.withLock({ $0.logger }) else { return }
        let summary = path.machine.summary(now: now)
        let figures =
            "\(summary.probesSent) probes in \(Double(summary.elapsed / 1_000_000) / 1000) s, loss measured "
            + "\(Int((summary.measuredLoss * 100).rounded())) %, window \(summary.windowProbes) probes"
        switch verdict {
        case .open:
            logger.debug("UDP path to \(path.peer) open: \(summary.answers) answer to \(figures)")
        case .blocked:
            let words =
                "no UDP answer from \(path.peer) to \(figures): UDP seems blocked between the hosts; its unreliable "
                + "messages go on the connection"
            logger.warning("\(words)")
        case .probing:
            break
        }
    }
}
