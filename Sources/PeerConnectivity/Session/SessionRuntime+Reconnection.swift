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
extension SessionRuntime {
    /// How long after the first message since the last acknowledgement one is sent, when fewer than a
    /// batch arrive meanwhile.
    static let ackDelay = TimeAmount.milliseconds(100)

    /// The ACK timer of `peer`'s link fired, on `connection`'s event loop: acknowledge what arrived since
    /// the last ACK, if the link still runs on that connection. A link that dropped meanwhile is told what
    /// arrived when it resumes instead.
    func sendDueAck(to peer: PeerID, on connection: Connection) {
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
    /// Throws ``SessionError/messageTooLargeForPeer(_:size:limit:)`` when a target announced a smaller
    /// limit than `size`, before anything is sent to any of them.
    func checkMessageLength(_ size: Int, to targets: [PeerID]) throws(SessionError) {
        try peers.withLock { table throws(SessionError) in
            for peer in targets {
                if let accepts = table[peer]?.peerAccepts, size > accepts {
                    throw SessionError.messageTooLargeForPeer(peer, size: size, limit: accepts)
                }
            }
        }
    }

    func sendResumable(_ frame: EncodedFrame, to peer: PeerID) async throws {
        let limit = configuration.reconnection?.retainedBytesLimit ?? Int.max
        while true {
            let step = try peers.withLock { table throws(SessionError) -> SendStep in
                // The ledger is changed in place (`table[peer]!.link!`): a copy of the entry would make
                // its kept messages be copied on every send.
                guard let state = table[peer]?.state else { throw SessionError.peerNotConnected(peer) }
                if let accepts = table[peer]?.peerAccepts, frame.byteCount - WireProtocol.headerLength > accepts {
                    let size = frame.byteCount - WireProtocol.headerLength
                    throw SessionError.messageTooLargeForPeer(peer, size: size, limit: accepts)
                }
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
    private static func mustWait(_ link: PeerTable.Link, adding bytes: Int, limit: Int) -> Bool {
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

    // MARK: - Receiving

    /// The link's first frame from the peer after establishment was not RESUME-SECRET: the peer does
    /// not resume, so the link keeps nothing. Called for every frame that reaches the session.
    func notePeerFrame(from peer: PeerID, on connection: Connection) {
        guard configuration.reconnection != nil else { return }
        let waiters = peers.withLock { $0.firstFrame(from: peer, on: connection, resumeSecret: nil) }
        for waiter in waiters { waiter.resume() }
    }

    /// A reliable message arrived on a link: count it, and acknowledge when a batch is due.
    func countReceived(_ bytes: Int, from peer: PeerID, on connection: Connection) {
        // One lock per message: the first frame's verdict (if it is the first) and the count together.
        let (action, waiters) = peers.withLock {
            table -> (DeliveryLedger<EncodedFrame>.IncomingAction?, [CheckedContinuation<Void, any Error>]) in
            guard table[peer]?.connection === connection else { return (nil, []) }
            let waiters = table.firstFrame(from: peer, on: connection, resumeSecret: nil)
            return (table[peer]?.link?.ledger.received(bytes: bytes), waiters)
        }
        for waiter in waiters { waiter.resume() }
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
        _ = peers.withLock { $0.firstFrame(from: peer, on: connection, resumeSecret: secret) }
    }

    func acknowledged(_ count: UInt64, from peer: PeerID, on connection: Connection) {
        let outcome = peers.withLock { table -> (waiters: [CheckedContinuation<Void, any Error>], violation: String?) in
            guard table[peer]?.connection === connection, table[peer]?.link != nil else { return ([], nil) }
            do {
                _ = try table[peer]!.link!.ledger.acknowledged(upTo: count)
            } catch {
                return ([], "\(error)")
            }
            return (table.takeSendWaiters(of: peer), nil)
        }
        for waiter in outcome.waiters { waiter.resume() }
        if let violation = outcome.violation {
            connection.close(.protocolViolation.with(detail: violation))
        }
    }

    /// The peer's session listener, for dialling it to resume (from SESSION-LISTENER).
    func learnResumeEndpoint(port: UInt16, on connection: Connection, from peer: PeerID) {
        guard configuration.reconnection != nil, let host = connection.remoteIPAddress else { return }
        peers.withLock { $0.resumeEndpoint(host: host, port: Int(port), of: peer, on: connection) }
    }
}

extension SessionRuntime {
    /// While `peer`'s link is being resumed after `old` dropped: waits until the peer is connected
    /// again and returns the new connection (a resource's sender goes on there).
    ///
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` when the link is not resumed:
    ///   reconnection is off, its window ended, or the peer left.
    func resumedConnection(to peer: PeerID, replacing old: Connection) async throws -> Connection {
        while true {
            let found = try peers.withLock { table throws(SessionError) -> Connection? in
                guard table[peer]?.link != nil else { throw SessionError.peerNotConnected(peer) }
                if table[peer]?.state == .connected, let connection = table[peer]?.connection, connection !== old {
                    return connection
                }
                return nil
            }
            if let found { return found }
            // Woken when the link is resumed or given up (the `send`s waiting on it are).
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let waits = peers.withLock { table -> Bool in
                    guard table[peer]?.link != nil else { return false }
                    if table[peer]?.state == .connected, let connection = table[peer]?.connection, connection !== old {
                        return false
                    }
                    table[peer]?.link?.sendWaiters.append(continuation)
                    return true
                }
                if !waits { continuation.resume() }
            }
        }
    }
}
