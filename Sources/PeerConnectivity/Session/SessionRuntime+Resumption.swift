import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Reconnection, the other half (see `SessionRuntime+Reconnection.swift` for numbering and acknowledgements):
/// a link that drops is re-established by the lower peer id's dials (RESUME) within the window, or given up.
extension SessionRuntime {
    // MARK: - The link drops

    /// A connection closed without goodbye: keep its peer `connecting` and re-establish the link, if
    /// the link resumes.
    ///
    /// - Returns: `true` when the peer is kept (reconnecting, or its closed connection was a failed
    ///   resume attempt); `false` when the caller reports it gone.
    func reconnectIfResumable(_ peer: PeerID, closed connection: Connection, reason: DisconnectReason) -> Bool {
        guard let settings = configuration.reconnection else { return false }
        let drop = withPeers { $0.dropped(peer, connection: connection, reason: reason) }
        let generation: Int
        let dial: (host: String, port: Int, secret: [UInt8])?
        let pending: Connection?
        switch drop {
        case .report: return false
        case .keep: return true
        case .reconnect(let planned, let planDial, let planPending):
            (generation, dial, pending) = (planned, planDial, planPending)
        }
        configuration.logger.debug("link to \(peer) dropped (\(reason)): reconnecting")
        eventLoop.scheduleTask(in: TimeAmount(settings.window)) { [weak self] in
            self?.giveUp(peer, generation: generation, reason: .reconnectionFailed)
        }
        if let pending {
            acceptResume(pending, from: peer)
        }
        if let dial {
            Task { [weak self] in
                await self?.redial(peer, generation: generation, host: dial.host, port: dial.port, secret: dial.secret)
            }
        }
        return true
    }

    /// Dials the peer's session listener until the link is back, the window ends or the peer refuses.
    private func redial(_ peer: PeerID, generation: Int, host: String, port: Int, secret: [UInt8]) async {
        guard let settings = configuration.reconnection else { return }
        var backoff = settings.initialBackoff
        while !isShutDown, let nextExpected = nextExpected(from: peer, generation: generation) {
            let resumption = ConnectionStateMachine.Resumption(
                expectedPeer: peer,
                secret: secret,
                nextExpected: nextExpected,
                timeout: TimeAmount(settings.attemptTimeout)
            )
            do {
                let connection = try await ConnectionDialer.resume(
                    host: host,
                    port: port,
                    localPeer: self.peer,
                    resumption: resumption,
                    configuration: connectionConfiguration,
                    group: eventLoop,
                    delegate: ResumeDialDelegate(session: self)
                )
                _ = try await connection.established.get()
                return
            } catch let error as ConnectionClosedError where error.reason == .resumeRefused {
                giveUp(peer, generation: generation, reason: error.reason)
                return
            } catch {
                configuration.logger.debug("resuming the link to \(peer) at \(host):\(port) failed: \(error)")
            }
            // The backoff, with jitter, as a timer on the session's event loop.
            let wait = backoff * Double.random(in: 0.5...1.0)
            try? await eventLoop.scheduleTask(in: TimeAmount(wait)) {}.futureResult.get()
            backoff = min(backoff * 2, settings.maximumBackoff)
        }
    }

    /// How many messages this side has received on the link, while it is down in this generation.
    private func nextExpected(from peer: PeerID, generation: Int) -> UInt64? {
        peers.withLock { $0.nextExpected(from: peer, generation: generation) }
    }

    /// The link did not come back (window ended, or the peer refused): the peer goes `notConnected`,
    /// saying how many messages it never confirmed; waiting `send`s throw.
    private func giveUp(_ peer: PeerID, generation: Int, reason: DisconnectReason) {
        let outcome = withPeers { table in
            let outcome = table.giveUp(peer, generation: generation, reason: reason)
            // Counted before the peer is reported gone: whoever sees it gone sees it counted.
            if outcome != nil { LinkMetrics.linkGivenUp() }
            return outcome
        }
        guard let (waiters, full) = outcome else { return }
        configuration.logger.debug("gave up the link to \(peer): \(full)")
        let error = SessionError.peerNotConnected(peer, reason: full)
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: - Resuming

    func resumeRequested(by peer: PeerID, secret: [UInt8], peerExpects: UInt64, on connection: Connection) {
        let verdict = peers.withLock { table in
            table.resumeRequested(by: peer, secret: secret, on: connection)
        }
        switch verdict {
        case .refuse(let why):
            configuration.logger.debug("refusing to resume the link to \(peer): \(why)")
            connection.decline(.resumeRefused.with(detail: why))
        case .accept(let nextExpected):
            acceptResume(connection, from: peer, nextExpected: nextExpected)
        case .closeOld(let old):
            old.abort()
        }
    }

    /// Accepts a RESUME: the link goes on over `connection`.
    ///
    /// - Parameter nextExpected: how many messages this side received on the link; read now if `nil`.
    private func acceptResume(_ connection: Connection, from peer: PeerID, nextExpected: UInt64? = nil) {
        guard let nextExpected = nextExpected ?? peers.withLock({ $0[peer]?.link?.ledger.nextExpected }) else {
            connection.decline(.resumeRefused)
            return
        }
        Task {
            try? await connection.acceptResume(
                delegate: self,
                nextExpected: nextExpected,
                keepaliveInterval: connectionConfiguration.keepaliveInterval,
                livenessTimeout: connectionConfiguration.livenessTimeout,
                maximumMessageLength: configuration.maximumMessageLength
            )
        }
    }

    func resumed(_ peer: PeerID, peerExpects: UInt64, on connection: Connection) {
        let outcome = withPeers { table in
            let outcome = table.resumed(peer, peerExpects: peerExpects, on: connection)
            if case .resumed(_, let again) = outcome {
                // Under the lock: what the peer lacks goes out before anything sent from now on.
                for frame in again {
                    _ = try? connection.enqueue(frame)
                }
            }
            return outcome
        }
        switch outcome {
        case .resumed(let waiters, let again):
            configuration.logger.debug("link to \(peer) resumed: \(again.count) message(s) sent again")
            for waiter in waiters { waiter.resume() }
            let probes = peers.withLock { $0[peer]?.peerProbesDatagrams ?? false }
            datagrams.established(connection, with: peer, probes: probes)
            meshEstablished(connection)
        case .refused(let reason):
            connection.close(reason)
        }
    }

    /// Closes the connection to `peer` at once, without goodbye, as a crash or a cut cable would (tests).
    func abortConnection(to peer: PeerID) {
        let connection = peers.withLock { $0[peer]?.connection }
        connection?.abort()
    }

    /// Silences the connection to `peer`, as a cut cable would (tests).
    func silenceConnection(to peer: PeerID) {
        let connection = peers.withLock { $0[peer]?.connection }
        connection?.silence()
    }
}

/// The event handler of a connection dialled to resume a link: it hands the session nothing until the
/// link is resumed (the session must not take it for an invitation), then everything.
private final class ResumeDialDelegate: ConnectionDelegate {
    /// Held strongly: the handler drops its event handler when the connection closes.
    private let session: SessionRuntime?
    private let resumed = Atomic<Bool>(false)

    init(session: SessionRuntime) {
        self.session = session
    }

    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .identified:
            return .more
        case .invitation:
            connection.decline(.declined)
            return .more
        case .established:
            connection.close(.unexpectedPeer)
            return .more
        case .resumeRequested:
            connection.decline(.resumeRefused.with(detail: "a resuming connection takes no RESUME"))
            return .more
        case .resumed:
            guard let session else {
                connection.close(.localDisconnect)
                return .more
            }
            resumed.store(true, ordering: .sequentiallyConsistent)
            return session.connection(connection, handle: event)
        case .closed:
            // Before the link is resumed the dial loop sees the failure; after, it is the session's connection.
            guard resumed.load(ordering: .sequentiallyConsistent) else { return .more }
            return session?.connection(connection, handle: event) ?? .more
        case .message, .datagramEndpoint, .datagramKey, .membership, .channel, .resumeSecret, .acknowledged:
            return session?.connection(connection, handle: event) ?? .more
        }
    }
}
