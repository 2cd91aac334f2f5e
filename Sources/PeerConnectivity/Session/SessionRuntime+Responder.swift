import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// The ``Session/Configuration/messageResponder``: each message is offered to it on the event loop that
/// read it, before it is delivered; its replies are queued there, without a task.
extension SessionRuntime {
    /// The responder, unless there is none or the session resumes links (whose sends may have to wait for
    /// room in the resend ledger, which a reply written in the read cannot).
    private var responder: MessageResponder? {
        configuration.reconnection == nil ? configuration.messageResponder : nil
    }

    /// Whether messages are offered to a responder.
    var hasResponder: Bool { responder != nil }

    /// A reliable message (a DATA frame's, or a large message's at its END): answered, taken or delivered,
    /// as the responder says; without one, delivered.
    ///
    /// - Parameter keepingStorage: give `data` back to `connection` for the next message's bytes
    ///   (``Connection/keepMessageStorage(_:)``) unless it is delivered.
    /// - Returns: whether to go on reading from `connection`.
    func respondOrDeliver(
        _ data: Data,
        from peer: PeerID,
        on connection: Connection,
        keepingStorage: Bool = false
    ) -> ConnectionReadDemand {
        guard let responder else { return deliverReliable(data, from: peer) }
        let demand: ConnectionReadDemand
        switch responder.respond(data, peer, .reliable) {
        case .deliver:
            return deliverReliable(data, from: peer)
        case .consumed:
            demand = .more
        case .reply(let reply):
            demand = self.reply(reply, to: peer, on: connection)
        }
        if keepingStorage { connection.keepMessageStorage(data) }
        return demand
    }

    /// An unreliable message: answered or taken as the responder says; `false` when it must be delivered.
    func respondUnreliable(_ data: Data, from peer: PeerID) -> Bool {
        guard let responder else { return false }
        switch responder.respond(data, peer, .unreliable) {
        case .deliver:
            return false
        case .consumed:
            return true
        case .reply(let reply):
            replyUnreliable(reply, to: peer)
            return true
        }
    }

    /// Queues a reliable reply on the connection the message came on; over the queue's high watermark,
    /// reading pauses until it has drained.
    private func reply(_ reply: Data, to peer: PeerID, on connection: Connection) -> ConnectionReadDemand {
        if let why = refusal(ofReply: reply.count, limit: configuration.maximumMessageLength, on: connection) {
            dropped(reply, to: peer, why: why)
            return .more
        }
        guard reply.count <= WireProtocol.inlineMessageLimit else {
            Task { [configuration] in
                do {
                    try await Session.sendLarge(reply, on: connection, to: peer)
                } catch {
                    configuration.logger.warning("reply of \(reply.count) bytes to \(peer) not delivered: \(error)")
                }
            }
            return .more
        }
        let mustWait: Bool
        do {
            mustWait = try connection.enqueue(dataFrame(reply))
        } catch {
            return .more  // closing: its closed event follows
        }
        guard mustWait else { return .more }
        Task {
            try? await connection.waitUntilDrained()
            connection.resumeReading()
        }
        return .pause
    }

    /// Sends an unreliable reply as ``Session/send(_:toPeers:mode:)-(Data,_,_)`` does: by UDP, or on the
    /// connection while the peer's UDP endpoint is not known.
    private func replyUnreliable(_ reply: Data, to peer: PeerID) {
        let limit = min(WireProtocol.maximumUnreliableMessageLength, configuration.maximumMessageLength)
        guard let connection = try? connection(to: peer) else { return }  // gone: nothing to answer
        if let why = refusal(ofReply: reply.count, limit: limit, on: connection) {
            dropped(reply, to: peer, why: why)
            return
        }
        guard !datagrams.send(reply, on: connection) else { return }
        // Unreliable: a full queue drops it rather than holding up reading.
        _ = try? connection.enqueue(dataFrame(reply))
    }

    /// Why a reply of `size` bytes cannot go on `connection`, if it cannot.
    private func refusal(ofReply size: Int, limit: Int, on connection: Connection) -> String? {
        if size > limit { return "larger than this session's limit of \(limit) bytes" }
        if let accepts = connection.peerMaximumMessageLength, size > accepts {
            return "larger than the \(accepts) bytes the peer accepts"
        }
        return nil
    }

    private func dropped(_ reply: Data, to peer: PeerID, why: String) {
        connectionConfiguration.warnings.warn(
            "dropped a reply of \(reply.count) bytes to \(peer): \(why)",
            to: configuration.logger
        )
    }
}
