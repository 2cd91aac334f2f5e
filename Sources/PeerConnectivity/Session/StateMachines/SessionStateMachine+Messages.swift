import PeerConnectivityCore

/// The reliable message path of a link with reconnection on: numbering and keeping what is sent,
/// counting and acknowledging what arrives, freeing what the peer confirms. Each decision changes the
/// link's ``DeliveryLedger`` in place (a copy would copy its kept messages) and returns what the session
/// does next, outside its lock.
extension SessionStateMachine {
    /// What a reliable send to a peer does next.
    enum ResumableSend {
        /// The peer has no link (yet): send on its connection as without reconnection.
        case plain(Connection)
        /// Numbered and kept until the peer confirms it: queue it on `live`, or, with `nil` (the link is
        /// being re-established), leave it for when the link is back.
        case numbered(live: Connection?)
        /// The link keeps as much as it may: wait for acknowledgements (``waitForRoom(to:adding:limit:waiter:)``).
        case full
    }

    /// What an acknowledgement did.
    struct Acknowledgement {
        /// The `send`s that waited for room, to wake.
        var waiters: [Waiter] = []
        /// Why the ACK breaks the protocol (it confirms more than was sent): close the connection.
        var violation: String?
    }

    /// A reliable message of `frame` for `peer`: refused, sent plainly, numbered and kept, or made to
    /// wait for room, the link keeping at most `limit` bytes (a single larger message is let through
    /// alone).
    ///
    /// - Throws: ``SessionError/peerNotConnected(_:reason:)`` when the peer is neither connected nor
    ///   reconnecting; ``SessionError/messageTooLargeForPeer(_:size:limit:)`` when the peer announced a
    ///   smaller limit.
    mutating func sendResumable(
        _ frame: EncodedFrame,
        to peer: PeerID,
        limit: Int
    ) throws(SessionError) -> ResumableSend {
        guard let record = records[peer] else { throw SessionError.peerNotConnected(peer) }
        let size = frame.byteCount - WireProtocol.headerLength
        if let accepts = record.peerAccepts, size > accepts {
            throw SessionError.messageTooLargeForPeer(peer, size: size, limit: accepts)
        }
        guard let reconnecting = record.link.map({ $0.reconnecting != nil }) else {
            guard record.state == .connected, let connection = record.connection else {
                throw SessionError.peerNotConnected(peer)
            }
            return .plain(connection)
        }
        let live = record.state == .connected ? record.connection : nil
        guard live != nil || reconnecting else { throw SessionError.peerNotConnected(peer) }
        if Self.mustWait(record.link!, adding: frame.byteCount, limit: limit) { return .full }
        // In place: `record` is a copy, and its ledger's messages with it.
        _ = records[peer]!.link!.ledger.sent(frame, bytes: frame.byteCount)
        return .numbered(live: live)
    }

    /// A message numbered for `peer` could not be queued on its connection (it was closing).
    ///
    /// - Returns: whether it is kept for when the link is back; if not, the send fails.
    func unqueued(to peer: PeerID) -> Bool {
        records[peer]?.link?.ledger.retaining == true
    }

    /// Keeps `waiter` until a message of `bytes` may fit in `peer`'s link, it comes back, or it is given up.
    ///
    /// - Returns: `false` when there is room already (or no link): resume it at once.
    mutating func waitForRoom(to peer: PeerID, adding bytes: Int, limit: Int, waiter: Waiter) -> Bool {
        guard let link = records[peer]?.link, Self.mustWait(link, adding: bytes, limit: limit) else { return false }
        records[peer]?.link?.sendWaiters.append(waiter)
        return true
    }

    /// Whether a message of `bytes` must wait for acknowledgements: the link keeps messages, keeps some
    /// already, and would keep more than `limit` with it.
    private static func mustWait(_ link: Link, adding bytes: Int, limit: Int) -> Bool {
        link.ledger.retaining && link.ledger.retainedBytes > 0 && link.ledger.retainedBytes + bytes > limit
    }

    /// A reliable message of `bytes` arrived from `peer` on `connection`: the first frame's verdict (if it
    /// is the link's first) and the count, with what to do about acknowledging.
    ///
    /// - Returns: `nil` when `connection` no longer holds the peer (drop the message); and the `send`s to
    ///   wake if the peer turned out not to resume.
    mutating func receivedMessage(
        bytes: Int,
        from peer: PeerID,
        on connection: Connection
    ) -> (action: DeliveryLedger<EncodedFrame>.IncomingAction?, waiters: [Waiter]) {
        guard records[peer]?.connection === connection else { return (nil, []) }
        let waiters = firstFrame(from: peer, on: connection, resumeSecret: nil)
        return (records[peer]?.link?.ledger.received(bytes: bytes), waiters)
    }

    /// The acknowledgement timer of `peer`'s link fired for `connection`.
    ///
    /// - Returns: the count to acknowledge, if the link still runs on that connection and owes one.
    mutating func ackDue(to peer: PeerID, on connection: Connection) -> UInt64? {
        guard let record = records[peer], record.connection === connection, record.state == .connected else {
            return nil
        }
        return records[peer]?.link?.ledger.ackDue()
    }

    /// ACK: the peer has `count` messages of the link; what it confirms is no longer kept.
    mutating func acknowledged(_ count: UInt64, from peer: PeerID, on connection: Connection) -> Acknowledgement {
        guard records[peer]?.connection === connection, records[peer]?.link != nil else { return Acknowledgement() }
        do {
            _ = try records[peer]!.link!.ledger.acknowledged(upTo: count)
        } catch {
            return Acknowledgement(violation: "\(error)")
        }
        return Acknowledgement(waiters: takeSendWaiters(of: peer))
    }
}
