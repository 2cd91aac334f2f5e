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
        let count = peers.withLock { $0.ackDue(to: peer, on: connection) }
        if let count { connection.sendControl(.ack(count)) }
    }

    // MARK: - Sending

    /// What a reliable send to a peer with a link does once the lock is released.
    private enum SendStep {
        /// The peer has no link (yet): send on its connection as without reconnection.
        case plain(Connection)
        /// Queued on the connection (`enqueued`), or kept for when the link is back (`nil`); wait for
        /// the connection's queue to drain if it is over its high watermark.
        case numbered(Connection?, Connection.Enqueued?)
        /// The link keeps as much as it may: wait for acknowledgements.
        case full
    }

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

    /// Sends one reliable message to `peer`, numbered and kept until the peer confirms it; while the
    /// link is down it is only kept, and goes out when the link is back. The table decides
    /// (``SessionStateMachine/sendResumable(_:to:limit:)``); the frame is queued under the table's lock,
    /// so that the connection's order is the ledger's, and the event loop is woken after it.
    ///
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` when the peer is not connected nor
    ///   reconnecting, or its link is given up while this waits for room;
    ///   ``SessionError/messageTooLargeForPeer(_:size:limit:)`` when the peer takes no message so large.
    func sendResumable(_ frame: EncodedFrame, to peer: PeerID) async throws {
        let limit = configuration.reconnection?.retainedBytesLimit ?? Int.max
        while true {
            let step = try peers.withLock { table throws(SessionError) -> SendStep in
                switch try table.sendResumable(frame, to: peer, limit: limit) {
                case .plain(let connection):
                    return .plain(connection)
                case .full:
                    return .full
                case .numbered(live: nil):
                    return .numbered(nil, nil)
                case .numbered(live: let live?):
                    do throws(ConnectionClosedError) {
                        return .numbered(live, try live.enqueueWithoutWaking(frame))
                    } catch {
                        // Kept in the ledger: it goes out again when the link is back.
                        if table.unqueued(to: peer) { return .numbered(nil, nil) }
                        throw SessionError.peerNotConnected(peer, reason: error.reason)
                    }
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
            case .numbered(let connection?, let enqueued?):
                connection.wake(after: enqueued)
                // A connection that closes meanwhile is fine: the message is kept for the next one.
                if enqueued.overHighWatermark { try? await connection.waitUntilDrained() }
                return
            case .numbered:
                return
            case .full:
                try await waitForRoom(to: peer, adding: frame.byteCount, limit: limit)
            }
        }
    }

    /// Waits until a message of `bytes` may fit (acknowledgements freed room), the link comes back, or it
    /// is given up (then throws).
    private func waitForRoom(to peer: PeerID, adding bytes: Int, limit: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let waits = peers.withLock { $0.waitForRoom(to: peer, adding: bytes, limit: limit, waiter: continuation) }
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
        let (action, waiters) = peers.withLock { $0.receivedMessage(bytes: bytes, from: peer, on: connection) }
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
        let outcome = peers.withLock { $0.acknowledged(count, from: peer, on: connection) }
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
