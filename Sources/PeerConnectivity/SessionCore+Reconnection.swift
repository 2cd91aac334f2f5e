import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// Reconnection (``Session/Reconnection``): links that drop are resumed, and reliable messages are
/// numbered, acknowledged and sent again so that each arrives exactly once.
///
/// - At establishment each side sends RESUME-SECRET, a random secret, as its first frame; a peer whose
///   first frame is something else does not resume, and its link keeps nothing.
/// - The receiver acknowledges (ACK) every 64 messages or 256 KiB, and ``ackDelay`` after the first
///   message since the last ACK (a one-shot timer on the connection's event loop, armed by the ledger);
///   the sender keeps what is not acknowledged (`DeliveryLedger`).
/// - On a drop without goodbye the peer goes `connecting`; the lower peer id dials the other's session
///   listener and sends HELLO + RESUME (the other's secret, and how many messages it received); the
///   listener answers RESUMED (how many it received). Each side then sends again what the other lacks.
extension SessionCore {
    /// How long after the first message since the last acknowledgement one is sent, when fewer than a
    /// batch arrive meanwhile.
    static let ackDelay = TimeAmount.milliseconds(100)
    /// How long one resume attempt may take (connect and handshake).
    static let resumeAttemptTimeout = TimeAmount.seconds(5)

    /// The ACK timer of `peer`'s link fired, on `connection`'s event loop: acknowledge what arrived since
    /// the last ACK, if the link still runs on that connection. A link that dropped meanwhile is told what
    /// arrived when it resumes instead.
    private func sendDueAck(to peer: PeerID, on connection: Connection) {
        let count = peers.withLock { table -> UInt64? in
            guard let entry = table[peer], entry.connection === connection, entry.state == .connected else {
                return nil
            }
            return table[peer]?.link?.ledger.ackDue()
        }
        if let count { connection.sendControl(.ack(count)) }
    }

    // MARK: - Sending

    /// What a reliable send to a peer with a link does next.
    private enum SendStep {
        /// The peer has no link (yet): send on its connection as without reconnection.
        case plain(Connection)
        /// Queued (or kept for when the link is back); wait for the connection's queue to drain.
        case drain(Connection)
        /// Queued, or kept for when the link is back.
        case done
        /// The link keeps as much as it may: wait for acknowledgements.
        case full
    }

    /// Sends one reliable message to `peer`, numbered and kept until the peer confirms it; while the
    /// link is down it is only kept, and goes out when the link is back.
    ///
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` when the peer is not connected nor
    ///   reconnecting, or its link is given up while this waits for room.
    func sendResumable(_ frame: EncodedFrame, to peer: PeerID) async throws {
        let limit = configuration.reconnection?.retainedBytesLimit ?? Int.max
        while true {
            let step = try peers.withLock { table throws(SessionError) -> SendStep in
                // The ledger is changed in place (`table[peer]!.link!`): a copy of the entry would make
                // its kept messages be copied on every send.
                guard let state = table[peer]?.state else { throw SessionError.peerNotConnected(peer) }
                let connection = table[peer]?.connection
                guard let reconnecting = table[peer]?.link.map({ $0.reconnecting != nil }) else {
                    guard state == .connected, let connection else { throw SessionError.peerNotConnected(peer) }
                    return .plain(connection)
                }
                let live = state == .connected ? connection : nil
                guard live != nil || reconnecting else { throw SessionError.peerNotConnected(peer) }
                if Self.mustWait(table[peer]!.link!, adding: frame.byteCount, limit: limit) { return .full }
                _ = table[peer]!.link!.ledger.sent(frame, bytes: frame.byteCount)
                guard let live else { return .done }
                do {
                    return try live.enqueue(frame) ? .drain(live) : .done
                } catch {
                    // Kept in the ledger: it goes out again when the link is back.
                    if table[peer]!.link!.ledger.retaining { return .done }
                    throw SessionError.peerNotConnected(peer, reason: (error as? ConnectionClosedError)?.reason)
                }
            }
            switch step {
            case .plain(let connection):
                do {
                    try await connection.send(frame)
                } catch let error as ConnectionClosedError {
                    throw SessionError.peerNotConnected(peer, reason: error.reason)
                }
                return
            case .drain(let connection):
                // A connection that closes meanwhile is fine: the message is kept for the next one.
                try? await connection.waitUntilDrained()
                return
            case .done:
                return
            case .full:
                try await waitForRoom(to: peer, adding: frame.byteCount, limit: limit)
            }
        }
    }

    /// Whether a message of `bytes` must wait for acknowledgements: the link keeps messages, keeps some
    /// already, and would keep more than `limit` with it (a single larger message is let through alone).
    private static func mustWait(_ link: ResumableLink, adding bytes: Int, limit: Int) -> Bool {
        link.ledger.retaining && link.ledger.retainedBytes > 0 && link.ledger.retainedBytes + bytes > limit
    }

    /// Waits until a message of `bytes` may fit (acknowledgements freed room), the link comes back, or it
    /// is given up (then throws).
    private func waitForRoom(to peer: PeerID, adding bytes: Int, limit: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let waits = peers.withLock { table -> Bool in
                guard let link = table[peer]?.link, Self.mustWait(link, adding: bytes, limit: limit) else {
                    return false
                }
                table[peer]?.link?.sendWaiters.append(continuation)
                return true
            }
            if !waits { continuation.resume() }
        }
    }

    /// Takes the `send` calls waiting on `peer`'s link, to look again: acknowledgements freed room.
    private func takeSendWaiters(
        _ peer: PeerID,
        in table: inout PeerTable
    ) -> [CheckedContinuation<Void, any Error>] {
        guard let waiters = table[peer]?.link?.sendWaiters, !waiters.isEmpty else { return [] }
        table[peer]?.link?.sendWaiters = []
        return waiters
    }

    // MARK: - Receiving

    /// The link's first frame from the peer after establishment was not RESUME-SECRET: the peer does
    /// not resume, so the link keeps nothing. Called for every frame that reaches the session.
    func notePeerFrame(from peer: PeerID, on connection: Connection) {
        guard configuration.reconnection != nil else { return }
        let waiters = peers.withLock { table -> [CheckedContinuation<Void, any Error>] in
            guard table[peer]?.connection === connection, table[peer]?.link?.peerResumes == nil else { return [] }
            table[peer]?.link?.peerResumes = false
            table[peer]?.link?.ledger.stopRetaining()
            return takeSendWaiters(peer, in: &table)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// A reliable message arrived on a link: count it, and acknowledge when a batch is due.
    func countReceived(_ bytes: Int, from peer: PeerID, on connection: Connection) {
        if peers.withLock({ $0[peer]?.connection === connection && $0[peer]?.link?.peerResumes == nil }) {
            notePeerFrame(from: peer, on: connection)
        }
        let action = peers.withLock { table -> DeliveryLedger<EncodedFrame>.InboundAction? in
            guard table[peer]?.connection === connection else { return nil }
            return table[peer]?.link?.ledger.received(bytes: bytes)
        }
        switch action {
        case .deliverAndAck(let count):
            connection.sendControl(.ack(count))
        case .deliverAndArmAckTimer:
            // A timer on the connection's event loop, armed once per acknowledgement owed: an idle link
            // wakes nothing.
            connection.eventLoop.scheduleTask(in: Self.ackDelay) { [weak self] in
                self?.sendDueAck(to: peer, on: connection)
            }
        case .deliver, nil:
            break
        }
    }

    func resumeSecret(_ secret: [UInt8], from peer: PeerID, on connection: Connection) {
        guard configuration.reconnection != nil else { return }
        peers.withLock { table in
            guard table[peer]?.connection === connection, table[peer]?.link?.peerResumes == nil else { return }
            table[peer]?.link?.peerSecret = secret
            table[peer]?.link?.peerResumes = true
        }
    }

    func acknowledged(_ count: UInt64, from peer: PeerID, on connection: Connection) {
        let outcome = peers.withLock { table -> (waiters: [CheckedContinuation<Void, any Error>], violation: String?) in
            guard table[peer]?.connection === connection, table[peer]?.link != nil else { return ([], nil) }
            do {
                _ = try table[peer]!.link!.ledger.acknowledged(upTo: count)
            } catch {
                return ([], "\(error)")
            }
            return (takeSendWaiters(peer, in: &table), nil)
        }
        for waiter in outcome.waiters { waiter.resume() }
        if let violation = outcome.violation {
            connection.close(.protocolViolation.with(detail: violation))
        }
    }

    /// The peer's session listener, for dialling it to resume (from SESSION-LISTENER).
    func learnResumeEndpoint(port: UInt16, on connection: Connection, from peer: PeerID) {
        guard configuration.reconnection != nil, let host = connection.remoteIPAddress else { return }
        peers.withLock { table in
            guard table[peer]?.connection === connection else { return }
            table[peer]?.link?.endpoint = (host, Int(port))
        }
    }

    // MARK: - The link drops

    /// A connection closed without goodbye: keep its peer `connecting` and re-establish the link, if
    /// the link resumes.
    ///
    /// - Returns: `true` when the peer is kept (reconnecting, or its closed connection was a failed
    ///   resume attempt); `false` when the caller reports it gone.
    func reconnectIfResumable(_ peer: PeerID, closed connection: Connection, reason: DisconnectReason) -> Bool {
        guard let settings = configuration.reconnection else { return false }
        enum Plan {
            case report
            case keep
            case reconnect(generation: Int, dial: (host: String, port: Int, secret: [UInt8])?, pending: Connection?)
        }
        let resumeDialled = PeerTable.winsTieBreak(inviter: self.peer, over: peer)
        let plan = peers.withLock { table -> Plan in
            guard let entry = table[peer], var link = entry.link else { return .report }
            if link.reconnecting != nil {
                // A resume attempt that failed: the link stays down.
                return entry.connection == nil ? .keep : .report
            }
            guard entry.connection === connection, entry.state == .connected, link.isResumable,
                reason == .connectionLost || reason == .livenessTimeout
            else { return .report }
            let generation = reconnectGenerations.add(1, ordering: .relaxed).newValue
            link.reconnecting = ResumableLink.Reconnecting(generation: generation)
            let pending = link.pendingResume
            link.pendingResume = nil
            table[peer]?.link = link
            table[peer]?.connection = nil
            table[peer]?.state = .connecting
            events.yield(.peerStateChanged(peer, .connecting, reason: reason))
            var dial: (host: String, port: Int, secret: [UInt8])?
            if pending == nil, resumeDialled, let endpoint = link.endpoint, let secret = link.peerSecret {
                dial = (endpoint.host, endpoint.port, secret)
            }
            return .reconnect(generation: generation, dial: dial, pending: pending)
        }
        let generation: Int
        let dial: (host: String, port: Int, secret: [UInt8])?
        let pending: Connection?
        switch plan {
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
                timeout: Self.resumeAttemptTimeout
            )
            do {
                let connection = try await ConnectionDialer.resume(
                    host: host,
                    port: port,
                    localPeer: self.peer,
                    resumption: resumption,
                    configuration: connectionConfiguration,
                    group: eventLoop,
                    handler: ResumeDialHandler(session: self)
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
        peers.withLock { table in
            guard let link = table[peer]?.link, link.reconnecting?.generation == generation else { return nil }
            return link.ledger.nextExpected
        }
    }

    /// The link did not come back (window ended, or the peer refused): the peer goes `notConnected`,
    /// saying how many messages it never confirmed; waiting `send`s throw.
    private func giveUp(_ peer: PeerID, generation: Int, reason: DisconnectReason) {
        let outcome = peers.withLock { table -> ([CheckedContinuation<Void, any Error>], DisconnectReason)? in
            guard let entry = table[peer], var link = entry.link, link.reconnecting?.generation == generation else {
                return nil
            }
            let unconfirmed = link.ledger.abandon().count
            let window = configuration.reconnection?.window ?? .zero
            let full = reason.with(
                detail: "\(reason == .reconnectionFailed ? "no link within \(window); " : "")"
                    + "\(unconfirmed) message(s) sent to the peer were not confirmed"
            ).with(unconfirmedMessages: unconfirmed)
            table[peer] = nil
            events.yield(.peerStateChanged(peer, .notConnected, reason: full))
            configuration.logger.debug("gave up the link to \(peer): \(full)")
            return (entry.waiters + link.sendWaiters, full)
        }
        guard let (waiters, full) = outcome else { return }
        let error = SessionError.peerNotConnected(peer, reason: full)
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    // MARK: - Resuming

    func resumeRequested(by peer: PeerID, secret: [UInt8], peerExpects: UInt64, on connection: Connection) {
        enum Verdict {
            case refuse(String)
            case accept
            case closeOld(Connection)
        }
        let verdict = peers.withLock { table -> Verdict in
            guard configuration.reconnection != nil, let entry = table[peer], let link = entry.link,
                link.isResumable
            else { return .refuse("\(peer) has no link to resume in this session") }
            guard link.matches(secret) else { return .refuse("the resume secret does not match") }
            guard link.pendingResume == nil else { return .refuse("another resume is under way") }
            if link.reconnecting != nil, entry.connection == nil { return .accept }
            guard let old = entry.connection else { return .refuse("\(peer) is not connected") }
            // The old connection still seems up here: it is gone, close it and answer once it has closed.
            table[peer]?.link?.pendingResume = connection
            return .closeOld(old)
        }
        switch verdict {
        case .refuse(let why):
            configuration.logger.debug("refusing to resume the link to \(peer): \(why)")
            connection.decline(.resumeRefused.with(detail: why))
        case .accept:
            acceptResume(connection, from: peer)
        case .closeOld(let old):
            old.abort()
        }
    }

    private func acceptResume(_ connection: Connection, from peer: PeerID) {
        let nextExpected = peers.withLock { $0[peer]?.link?.ledger.nextExpected }
        guard let nextExpected else {
            connection.decline(.resumeRefused)
            return
        }
        Task {
            try? await connection.acceptResume(
                handler: self,
                nextExpected: nextExpected,
                keepaliveInterval: connectionConfiguration.keepaliveInterval,
                livenessTimeout: connectionConfiguration.livenessTimeout,
                maximumMessageLength: configuration.maximumMessageLength
            )
        }
    }

    func resumed(_ peer: PeerID, peerExpects: UInt64, on connection: Connection) {
        enum Outcome {
            case resumed([CheckedContinuation<Void, any Error>])
            case refused(DisconnectReason)
        }
        let outcome = peers.withLock { table -> Outcome in
            guard let entry = table[peer], var link = entry.link, link.reconnecting != nil, entry.connection == nil
            else { return .refused(.resumeRefused.with(detail: "the link is not waiting to be resumed")) }
            let again: [EncodedFrame]
            do {
                again = try link.ledger.resume(peerExpects: peerExpects)
            } catch {
                return .refused(.protocolViolation.with(detail: "\(error)"))
            }
            link.ledger.resumed()
            link.reconnecting = nil
            for frame in again {
                _ = try? connection.enqueue(frame)
            }
            let waiters = entry.waiters + link.sendWaiters
            link.sendWaiters = []
            table[peer]?.link = link
            table[peer]?.waiters = []
            table[peer]?.connection = connection
            table[peer]?.state = .connected
            events.yield(.peerStateChanged(peer, .connected, reason: nil))
            configuration.logger.debug("link to \(peer) resumed: \(again.count) message(s) sent again")
            return .resumed(waiters)
        }
        switch outcome {
        case .resumed(let waiters):
            for waiter in waiters { waiter.resume() }
            datagrams.established(connection, with: peer)
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
private final class ResumeDialHandler: ConnectionEventHandler {
    /// Held strongly: the handler drops its event handler when the connection closes.
    private let session: SessionCore?
    private let resumed = Atomic<Bool>(false)

    init(session: SessionCore) {
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
