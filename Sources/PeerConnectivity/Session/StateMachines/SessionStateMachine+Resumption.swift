import PeerConnectivityCore

/// Reconnection's decisions: what a link learns of its peer, what a drop means, who dials, whether a
/// RESUME is taken, and what a resumed link sends again.
extension SessionStateMachine {
    /// What to do once a connection holding a peer closed.
    enum Drop {
        /// Not a resumable link's drop: report the peer gone (the caller releases it).
        case report
        /// A resume attempt failed while the link is down: the link stays down, the window runs on.
        case keep
        /// The link is down and being re-established: arm the window's timer for `generation`; answer
        /// `pending` (a RESUME that came before the drop was seen), or dial when `dial` says so.
        case reconnect(generation: Int, dial: (host: String, port: Int, secret: [UInt8])?, pending: Connection?)
    }

    /// What to do with a RESUME.
    enum ResumeVerdict {
        /// Decline it, with why.
        case refuse(String)
        /// Accept it: this side has received `nextExpected` messages on the link.
        case accept(nextExpected: UInt64)
        /// The old connection still seems up: abort it; the RESUME is answered once it has closed.
        case closeOld(Connection)
    }

    /// What a resumed link does.
    enum Resumption {
        /// Connected again: resume `waiters`, and send `again` (what the peer lacks) first.
        case resumed(waiters: [Waiter], again: [EncodedFrame])
        /// Close the connection with `reason`.
        case refused(DisconnectReason)
    }

    /// The peer's first frame after establishment: RESUME-SECRET (`secret`) if it resumes links, `nil`
    /// for anything else. Its link then keeps messages, or stops keeping any.
    ///
    /// - Returns: the `send`s waiting for room, to resume, when the link stops keeping messages.
    mutating func firstFrame(from peer: PeerID, on connection: Connection, resumeSecret secret: [UInt8]?) -> [Waiter] {
        guard records[peer]?.connection === connection, records[peer]?.link?.peerResumes == nil else { return [] }
        guard let secret else {
            records[peer]?.link?.peerResumes = false
            records[peer]?.link?.ledger.stopRetaining()
            return takeSendWaiters(of: peer)
        }
        records[peer]?.link?.peerSecret = secret
        records[peer]?.link?.peerResumes = true
        return []
    }

    /// The peer's session listener, where the lower peer id dials to resume (SESSION-LISTENER).
    mutating func resumeEndpoint(host: String, port: Int, of peer: PeerID, on connection: Connection) {
        guard records[peer]?.connection === connection else { return }
        records[peer]?.link?.endpoint = (host, port)
    }

    /// Takes the `send`s waiting on `peer`'s link.
    mutating func takeSendWaiters(of peer: PeerID) -> [Waiter] {
        guard let waiters = records[peer]?.link?.sendWaiters, !waiters.isEmpty else { return [] }
        records[peer]?.link?.sendWaiters = []
        return waiters
    }

    /// `connection`, which held `peer`, closed with `reason`.
    mutating func dropped(_ peer: PeerID, connection: Connection, reason: DisconnectReason) -> Drop {
        guard reconnectionWindow != nil, let record = records[peer], var link = record.link else { return .report }
        if link.reconnecting != nil {
            // A resume attempt that failed: the link stays down.
            return record.connection == nil ? .keep : .report
        }
        guard record.connection === connection, record.state == .connected, link.isResumable,
            reason == .connectionLost || reason == .livenessTimeout
        else { return .report }
        // The lower peer id dials the other's session listener: without its port it never could, and
        // waiting out the window would only keep the peer `connecting` for nothing.
        let dials = Self.winsTieBreak(inviter: localPeer, over: peer)
        if dials, link.endpoint == nil, link.pendingResume == nil { return .report }
        reconnectGeneration += 1
        let generation = reconnectGeneration
        link.reconnecting = Link.Reconnecting(generation: generation)
        let pending = link.pendingResume
        link.pendingResume = nil
        records[peer]?.link = link
        records[peer]?.connection = nil
        records[peer]?.state = .connecting
        report(peer, .connecting, reason: reason)
        // The lower peer id dials; the other waits for its RESUME.
        var dial: (host: String, port: Int, secret: [UInt8])?
        if pending == nil, dials, let endpoint = link.endpoint,
            let secret = link.peerSecret
        {
            dial = (endpoint.host, endpoint.port, secret)
        }
        return .reconnect(generation: generation, dial: dial, pending: pending)
    }

    /// How many messages this side has received on the link, while it is down in `generation`.
    func nextExpected(from peer: PeerID, generation: Int) -> UInt64? {
        guard let link = records[peer]?.link, link.reconnecting?.generation == generation else { return nil }
        return link.ledger.nextExpected
    }

    /// The link that dropped in `generation` did not come back (window ended, or the peer refused): the
    /// peer is released, with how many messages it never confirmed.
    ///
    /// - Returns: the callers and `send`s to fail, and the full reason; `nil` if the link came back.
    mutating func giveUp(
        _ peer: PeerID,
        generation: Int,
        reason: DisconnectReason
    ) -> (waiters: [Waiter], reason: DisconnectReason)? {
        guard let record = records[peer], var link = record.link, link.reconnecting?.generation == generation else {
            return nil
        }
        let unconfirmed = link.ledger.abandon().count
        let window = reconnectionWindow ?? .zero
        let full = reason.with(
            detail: "\(reason == .reconnectionFailed ? "no link within \(window); " : "")"
                + "\(unconfirmed) message(s) sent to the peer were not confirmed"
        ).with(unconfirmedMessages: unconfirmed)
        records[peer] = nil
        report(peer, .notConnected, reason: full)
        return (record.waiters + link.sendWaiters, full)
    }

    /// A RESUME from `peer` showing `secret` arrived on `connection`.
    mutating func resumeRequested(by peer: PeerID, secret: [UInt8], on connection: Connection) -> ResumeVerdict {
        guard reconnectionWindow != nil, let record = records[peer], let link = record.link, link.isResumable else {
            return .refuse("\(peer) has no link to resume in this session")
        }
        guard link.matches(secret) else { return .refuse("the resume secret does not match") }
        guard link.pendingResume == nil else { return .refuse("another resume is under way") }
        if link.reconnecting != nil, record.connection == nil { return .accept(nextExpected: link.ledger.nextExpected) }
        guard let old = record.connection else { return .refuse("\(peer) is not connected") }
        // The old connection still seems up here: it is gone, close it and answer once it has closed.
        records[peer]?.link?.pendingResume = connection
        return .closeOld(old)
    }

    /// The link to `peer` was re-established on `connection` (either side of RESUME); the peer has
    /// received `peerExpects` of this side's messages.
    mutating func resumed(_ peer: PeerID, peerExpects: UInt64, on connection: Connection) -> Resumption {
        guard let record = records[peer], var link = record.link, link.reconnecting != nil, record.connection == nil
        else { return .refused(.resumeRefused.with(detail: "the link is not waiting to be resumed")) }
        let again: [EncodedFrame]
        do {
            again = try link.ledger.resume(peerExpects: peerExpects)
        } catch {
            return .refused(.protocolViolation.with(detail: "\(error)"))
        }
        link.ledger.resumed()
        link.reconnecting = nil
        let waiters = record.waiters + link.sendWaiters
        link.sendWaiters = []
        records[peer]?.link = link
        records[peer]?.waiters = []
        records[peer]?.connection = connection
        records[peer]?.state = .connected
        report(peer, .connected)
        return .resumed(waiters: waiters, again: again)
    }
}

extension SessionStateMachine.Drop: Sendable where Connection: Sendable {}
extension SessionStateMachine.ResumeVerdict: Sendable where Connection: Sendable {}
extension SessionStateMachine.Resumption: Sendable where Waiter: Sendable {}
