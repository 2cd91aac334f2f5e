import NIOCore

extension ConnectionStateMachine {
    /// Which side of the invitation this connection is.
    package enum Role: Sendable {
        /// This side connected and invites the peer.
        case inviter(Invitation)
        /// This side accepted the TCP connection and waits to be invited.
        case invitee
        /// This side connected to re-establish a link that dropped (RESUME instead of INVITE).
        case resumer(Resumption)
    }

    /// What a resumer sends and expects.
    package struct Resumption: Sendable {
        /// The peer of the link that dropped.
        package var expectedPeer: PeerID
        /// The secret that peer gave this side (RESUME-SECRET).
        package var secret: [UInt8]
        /// How many reliable messages this side has received from the peer on the link.
        package var nextExpected: UInt64
        /// How long to wait for the answer.
        package var timeout: TimeAmount

        /// Makes what a resumer sends and expects.
        ///
        /// - Parameters:
        ///   - expectedPeer: the peer of the link that dropped.
        ///   - secret: the secret that peer gave this side.
        ///   - nextExpected: how many reliable messages this side has received from the peer.
        ///   - timeout: how long to wait for the answer.
        package init(expectedPeer: PeerID, secret: [UInt8], nextExpected: UInt64, timeout: TimeAmount) {
            self.expectedPeer = expectedPeer
            self.secret = secret
            self.nextExpected = nextExpected
            self.timeout = timeout
        }
    }

    /// What an inviter sends and expects.
    package struct Invitation: Sendable {
        /// The peer this side means to reach, when known from discovery; `nil` for a direct connection.
        package var expectedPeer: PeerID?
        /// Application data sent with the invitation.
        package var context: ByteBuffer
        /// How long to wait for the answer.
        package var timeout: TimeAmount
        /// Set when the connection resumes a dropped link (``Role/resumer(_:)`` on an encrypted
        /// connection): RESUME goes where INVITE would, once the connection is secured.
        package var resume: Frame.Resume?
        /// The largest message this side accepts on the connection, sent in INVITE.
        package var maximumMessageLength: Int

        /// Makes what an inviter sends and expects.
        ///
        /// - Parameters:
        ///   - expectedPeer: the peer to reach, `nil` for a direct connection.
        ///   - context: application data sent with the invitation.
        ///   - timeout: how long to wait for the answer.
        ///   - maximumMessageLength: the largest message this side accepts on the connection.
        package init(
            expectedPeer: PeerID?,
            context: ByteBuffer,
            timeout: TimeAmount,
            maximumMessageLength: Int = WireProtocol.defaultMaximumMessageLength
        ) {
            self.expectedPeer = expectedPeer
            self.context = context
            self.timeout = timeout
            self.maximumMessageLength = maximumMessageLength
        }

        /// What this side sends once the connection is secured: RESUME for a link being resumed, else INVITE.
        var openingFrame: Frame {
            if let resume { return .resume(resume) }
            return inviteFrame
        }

        /// The INVITE frame: its timeout in milliseconds, this side's largest message, and the context.
        var inviteFrame: Frame {
            let milliseconds = UInt32(clamping: timeout.nanoseconds / 1_000_000)
            let fields = HandshakeFields(acceptingMessagesUpTo: maximumMessageLength)
            return .invite(Frame.Invite(timeoutMilliseconds: milliseconds, fields: fields, context: context))
        }
    }
}
