import NIOCore

extension ConnectionStateMachine {
    /// What the handler must do after an event: one value per event, so that the message path
    /// (``deliverData(_:)``, and sending) allocates nothing for it.
    package enum Action: Equatable {
        /// Nothing.
        case none
        /// Write these frames and flush.
        case send([Frame])
        /// The connection is up: start the handshake deadline (the inviter's invitation timeout, the
        /// resumer's answer timeout, or the invitee's handshake timeout), then write `frames` and flush.
        case scheduleDeadline(TimeAmount, sending: [Frame])
        /// The inviter learned who answered (from its HELLO, verified by TLS when encrypted): write
        /// `frames` (the INVITE, unless it went with HELLO) and tell the owner.
        case peerIdentified(PeerID, sending: [Frame] = [])
        /// Both sides allow encryption: switch the stream to TLS (the inviter is the client), then
        /// check the peer's certificate against its HELLO and call ``secured(_:)``.
        case startTLS(asClient: Bool)
        /// The pairing code is known: write `frames`, start `deadline` instead of the handshake's when
        /// set (the invitee waits for the certificate decision), then ask the certificate decision about
        /// the peer and call ``certificateDecided(_:)`` with its verdict.
        case decideCertificate(PeerID, pairingCode: String, sending: [Frame], deadline: TimeAmount? = nil)
        /// An invitation arrived: the peer's part of the handshake is finished. Start the deadline
        /// `timeout` for the application's answer, tell those waiting for the handshake, and hand the
        /// invitation to the application.
        case deliverInvitation(from: PeerID, context: ByteBuffer, timeout: TimeAmount)
        /// The handshake is done: stop its deadline, write `frame` if any, tell the owner (and, when
        /// `finishingHandshake`, those waiting for the handshake), start the keepalive timer.
        case establish(PeerID, sending: Frame?, finishingHandshake: Bool)
        /// A resumer asks to re-establish its link (RESUME): the peer's part of the handshake is finished.
        /// Start `deadline` for the owner's answer, tell those waiting for the handshake, and hand the
        /// RESUME to the owner, which answers with
        /// ``ConnectionStateMachine/acceptResume(nextExpected:keepaliveInterval:livenessTimeout:)`` or declines.
        case deliverResume(from: PeerID, secret: [UInt8], peerExpects: UInt64, deadline: TimeAmount)
        /// A link was re-established: as ``establish(_:sending:finishingHandshake:)``, telling the owner
        /// how many of this side's reliable messages the peer has.
        case establishResumed(PeerID, peerExpects: UInt64, sending: Frame?, finishingHandshake: Bool)
        /// The peer's resume secret for this link (RESUME-SECRET).
        case deliverResumeSecret([UInt8], from: PeerID)
        /// The peer acknowledged this many reliable messages on the link (ACK).
        case deliverAck(UInt64, from: PeerID)
        /// Hand an application message to the owner.
        case deliverData(ByteBuffer, from: PeerID)
        /// The peer said where it receives unreliable messages.
        case deliverDatagramEndpoint(port: UInt16, token: UInt64, from: PeerID)
        /// The peer sent the key to seal datagrams to it with (encrypted connections only).
        case deliverDatagramKey([UInt8], from: PeerID)
        /// The peer told this side about its session: its listener, or other members (mesh).
        case deliverMembership(Frame, from: PeerID)
        /// Something happened on a channel the peer opened, or the peer credited or confirmed one this
        /// side opened: hand it to the owner.
        case channel(ChannelTable.Action, from: PeerID)
        /// The peer reset a channel this side opened: stop writing on it.
        case resetByPeer(channel: UInt32, ChannelResetCode)
        /// Stop the timers, write `frame` if any, then close the channel. `reason` is reported when it
        /// has closed.
        case close(DisconnectReason, sending: Frame?)
        /// The channel has closed: stop the timers and tell the owner, once; tell those waiting for the
        /// handshake when `finishingHandshake`, and fail those waiting for the connection when
        /// `neverEstablished`.
        case reportClosed(peer: PeerID?, reason: DisconnectReason, finishingHandshake: Bool, neverEstablished: Bool)
    }
}
