import NIOCore

/// One frame of the wire protocol, decoded.
package enum Frame: Sendable, Hashable {
    /// Opens a connection: who is speaking and which protocol version.
    case hello(Hello)
    /// The inviter asks to join the invitee's session.
    case invite(Invite)
    /// The invitee accepts the invitation: from now on both sides may send any frame.
    case accept
    /// The invitee declines the invitation; the connection closes after it.
    case decline(DisconnectReason)
    /// An application message.
    case data(ByteBuffer)
    /// A sign of life, sent on a timer.
    case keepalive
    /// The sender is closing the connection, and why.
    case goodbye(DisconnectReason)

    /// The body of a HELLO frame.
    package struct Hello: Sendable, Hashable {
        /// The protocol version the sender speaks.
        package var version: UInt16
        /// The sender's identity.
        package var peer: PeerID

        package init(version: UInt16 = WireProtocol.version, peer: PeerID) {
            self.version = version
            self.peer = peer
        }
    }

    /// The body of an INVITE frame.
    package struct Invite: Sendable, Hashable {
        /// How long the inviter waits for an answer, in milliseconds.
        package var timeoutMilliseconds: UInt32
        /// Application data sent with the invitation.
        package var context: ByteBuffer

        package init(timeoutMilliseconds: UInt32, context: ByteBuffer) {
            self.timeoutMilliseconds = timeoutMilliseconds
            self.context = context
        }
    }

    /// The frame's type byte.
    package var type: FrameType {
        switch self {
        case .hello: return .hello
        case .invite: return .invite
        case .accept: return .accept
        case .decline: return .decline
        case .data: return .data
        case .keepalive: return .keepalive
        case .goodbye: return .goodbye
        }
    }
}
