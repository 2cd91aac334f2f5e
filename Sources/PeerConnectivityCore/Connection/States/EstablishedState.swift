import NIOCore

/// The handshake is done: messages, control frames and channels flow until either side closes.
///
/// It only ever leaves for closing, always with its peer: the machine moves it there when an event
/// returns ``ConnectionStateMachine/Action/close(_:sending:)``. Receiving a message returns one value
/// and changes nothing, so the message path allocates nothing.
struct EstablishedState {
    typealias Action = ConnectionStateMachine.Action

    /// The peer on the other side.
    let peer: PeerID
    /// The channels (streams and resources) either side opened.
    var channels: ChannelTable
    /// The first channel number this side opens (odd for the inviter): a RESET of a channel with its
    /// parity is the peer's answer to one this side writes.
    private let localParity: UInt32

    /// What the peer said of itself in its INVITE or ACCEPT (the largest message it accepts, whether it
    /// reads folders); `nil` on a connection that resumed a link (the link's first connection said it).
    let peerFields: HandshakeFields?

    /// The state for a connection with `peer` that has just been established.
    init(peer: PeerID, settings: ConnectionSettings, isInviter: Bool, peerFields: HandshakeFields? = nil) {
        self.peer = peer
        self.peerFields = peerFields
        self.channels = ChannelTable(
            localIsInviter: isInviter,
            maximumIncomingChannels: settings.maximumIncomingChannels
        )
        self.localParity = ChannelTable.firstLocalChannel(localIsInviter: isInviter) & 1
    }

    /// A frame on an established connection.
    ///
    /// - Parameters:
    ///   - frame: the frame.
    ///   - isEncrypted: whether the connection is encrypted (DATAGRAM-KEY is allowed only then).
    mutating func frameReceived(_ frame: Frame, isEncrypted: Bool) -> Action {
        switch frame {
        case .data(let payload):
            return messageReceived(payload)
        case .keepalive:
            return .none
        case .datagramEndpoint(let port, let token):
            return .deliverDatagramEndpoint(port: port, token: token, from: peer)
        case .datagramKey(let key):
            guard isEncrypted else { return violation(.unexpectedFrame(.datagramKey, state: "connected")) }
            return .deliverDatagramKey(key, from: peer)
        case .sessionListener, .members:
            return .deliverMembership(frame, from: peer)
        case .resumeSecret(let secret):
            return .deliverResumeSecret(secret, from: peer)
        case .ack(let count):
            return .deliverAck(count, from: peer)
        case .open, .chunk, .end, .reset, .credit, .done, .block, .have:
            switch channels.frameReceived(frame) {
            case .violation(let error): return violation(error)
            case .none: return .none
            case .reset(let channel, let code) where channel & 1 == localParity:
                return .resetByPeer(channel: channel, code)
            case let action: return .channel(action, from: peer)
            }
        case .goodbye(let said):
            // A duplicate connection keeps its reason: the session waits for the one that replaces it.
            if said == .duplicate { return .close(said, sending: nil) }
            // The peer heard nothing from this side for its liveness timeout: the link failed, nobody left
            // (so reconnection resumes it).
            if said == .livenessTimeout {
                let detail = "the peer heard nothing from this side within its liveness timeout"
                return .close(DisconnectReason.livenessTimeout.with(detail: detail), sending: nil)
            }
            return .close(DisconnectReason.peerDisconnected.with(detail: "peer said: \(said)"), sending: nil)
        default:
            return violation(.unexpectedFrame(frame.type, state: "connected"))
        }
    }

    /// A message (a DATA frame's payload): delivered; nothing changes, so the machine asks for it
    /// without taking the state out.
    func messageReceived(_ payload: ByteBuffer) -> Action {
        .deliverData(payload, from: peer)
    }

    /// This side's reader consumed bytes of a channel the peer opened.
    ///
    /// - Returns: the CREDIT to send, or nothing when the channel has ended.
    mutating func grantCredit(_ increment: Int, on channel: UInt32) -> Action {
        guard let frame = channels.grant(increment, on: channel) else { return .none }
        return .send([frame])
    }

    /// This side ends a channel the peer opened.
    ///
    /// - Returns: the RESET to send, or nothing when the peer never opened it.
    mutating func resetIncomingChannel(_ channel: UInt32, _ code: ChannelResetCode) -> Action {
        guard let frame = channels.reset(channel, code) else { return .none }
        return .send([frame])
    }

    /// Closes with a GOODBYE naming the broken rule.
    private func violation(_ error: ProtocolError) -> Action {
        let reason = error.disconnectReason
        return .close(reason, sending: .goodbye(reason))
    }
}
