import Foundation
import NIOCore

/// One frame of the wire protocol, decoded.
package enum Frame: Sendable, Hashable {
    /// Opens a connection: who is speaking and which protocol version.
    case hello(Hello)
    /// The inviter asks to join the invitee's session.
    case invite(Invite)
    /// The invitee accepts the invitation, saying what it accepts on the connection (the largest
    /// message): from now on both sides may send any frame.
    case accept(HandshakeFields)
    /// The invitee declines the invitation; the connection closes after it.
    case decline(DisconnectReason)
    /// Inside TLS, the invitee commits to its pairing nonce: SHA-256(pkB ‖ pkA ‖ nB), 32 bytes.
    case pairCommit([UInt8])
    /// Inside TLS, a side's 32-byte pairing nonce (the inviter's first, then the invitee's).
    case pairNonce([UInt8])
    /// Inside TLS, before DATAGRAM-ENDPOINT: the 32-byte ChaCha20-Poly1305 key the peer must seal
    /// its datagrams to the sender with.
    case datagramKey([UInt8])
    /// An application message.
    case data(ByteBuffer)
    /// A sign of life, sent on a timer.
    case keepalive
    /// The sender is closing the connection, and why.
    case goodbye(DisconnectReason)
    /// Where the sender receives unreliable messages: its UDP port (on the address this connection
    /// comes from) and the token every datagram sent to it must start with.
    case datagramEndpoint(port: UInt16, token: UInt64)
    /// The TCP port on which the sender's session accepts connections from the other members (mesh).
    case sessionListener(port: UInt16)
    /// Other members of the sender's session, where to reach them: connect to those you lack.
    case members([Member])
    /// The secret the peer must show to resume this link after it drops (reconnection), sent once
    /// after establishment by a side that has reconnection on.
    case resumeSecret([UInt8])
    /// Instead of INVITE: the resumer re-establishes a link that dropped, proving it with the secret
    /// the invitee gave it, and says how many of the invitee's reliable messages it has received.
    case resume(Resume)
    /// The answer to RESUME: how many of the resumer's reliable messages the invitee has received.
    case resumed(nextExpected: UInt64)
    /// How many reliable messages the sender has received from the peer on this link (cumulative).
    case ack(UInt64)
    /// The sender opens a channel (a stream or a resource) to write on.
    case open(Open)
    /// Bytes on a channel, within the window the receiver granted.
    case chunk(channel: UInt32, ByteBuffer)
    /// The writer finished the channel; a resource's END carries its root digest (SHA-256 over its
    /// length and its blocks' digests, see ``ResourceLayout``).
    case end(channel: UInt32, digest: [UInt8]?)
    /// Either side ends a channel at once, and why.
    case reset(channel: UInt32, ChannelResetCode)
    /// The receiver of a channel lets the writer send `increment` more bytes.
    case credit(channel: UInt32, increment: UInt32)
    /// The receiver of a resource has checked it and put it in place.
    case done(channel: UInt32)
    /// The writer of a resource: the CHUNKs that follow, up to the block's length, are block `index`,
    /// whose block digest (8 bytes, ``BlockHasher``) is `digest`.
    case block(channel: UInt32, index: UInt32, digest: [UInt8])
    /// The receiver of a resource, answering its OPEN: which blocks it holds already, from an earlier
    /// attempt at the same resource, so that the writer sends only the others.
    case have(channel: UInt32, Have)

    /// The body of a HAVE frame, after the channel.
    package struct Have: Sendable, Hashable {
        /// SHA-256 over the digests of the blocks held, in order (32 zero bytes when none is).
        package var digest: [UInt8]
        /// Bit `i` (byte `i / 8`, bit `i % 8` from the least significant) set when block `i` is held;
        /// empty when none is.
        package var bitmap: [UInt8]

        package init(digest: [UInt8], bitmap: [UInt8]) {
            self.digest = digest
            self.bitmap = bitmap
        }

        /// A HAVE that holds nothing: the writer sends every block.
        package static let nothing = Have(digest: [UInt8](repeating: 0, count: WireProtocol.digestLength), bitmap: [])
    }

    /// One entry of a MEMBERS frame.
    package struct Member: Sendable, Hashable {
        /// The member.
        package var peer: PeerID
        /// Its IP address as the sender sees it: 4 bytes (IPv4) or 16 (IPv6), network order.
        package var address: [UInt8]
        /// Its session listener's port.
        package var port: UInt16

        package init(peer: PeerID, address: [UInt8], port: UInt16) {
            self.peer = peer
            self.address = address
            self.port = port
        }
    }

    /// The body of a RESUME frame.
    package struct Resume: Sendable, Hashable {
        /// The resumer's peer id, as in its HELLO.
        package var peer: UUID
        /// The secret the invitee sent the resumer in RESUME-SECRET.
        package var secret: [UInt8]
        /// How many reliable messages the resumer has received from the invitee on this link.
        package var nextExpected: UInt64

        package init(peer: UUID, secret: [UInt8], nextExpected: UInt64) {
            self.peer = peer
            self.secret = secret
            self.nextExpected = nextExpected
        }
    }

    /// The body of an OPEN frame.
    package struct Open: Sendable, Hashable {
        /// The channel's number, chosen by the opener (odd for the inviter, even for the invitee).
        package var channel: UInt32
        /// A byte stream or a resource.
        package var kind: ChannelKind
        /// A resource's length in bytes; 0 for a stream.
        package var size: UInt64
        /// The name the opener gave, as sent (untrusted: not necessarily UTF-8).
        package var name: [UInt8]

        package init(channel: UInt32, kind: ChannelKind, size: UInt64, name: [UInt8]) {
            self.channel = channel
            self.kind = kind
            self.size = size
            self.name = name
        }
    }

    /// The body of a HELLO frame.
    package struct Hello: Sendable, Hashable {
        /// The protocol version the sender speaks.
        package var version: UInt16
        /// The sender's identity.
        package var peer: PeerID
        /// The sender's encryption preference.
        package var encryption: EncryptionPreference
        /// The fields after the preference; none in this version (a later one may add some).
        package var fields: HandshakeFields

        package init(
            version: UInt16 = WireProtocol.version,
            peer: PeerID,
            encryption: EncryptionPreference = .none,
            fields: HandshakeFields = HandshakeFields()
        ) {
            self.version = version
            self.peer = peer
            self.encryption = encryption
            self.fields = fields
        }
    }

    /// The body of an INVITE frame.
    package struct Invite: Sendable, Hashable {
        /// How long the inviter waits for an answer, in milliseconds.
        package var timeoutMilliseconds: UInt32
        /// What the inviter accepts on the connection (the largest message).
        package var fields: HandshakeFields
        /// Application data sent with the invitation.
        package var context: ByteBuffer

        package init(timeoutMilliseconds: UInt32, fields: HandshakeFields, context: ByteBuffer) {
            self.timeoutMilliseconds = timeoutMilliseconds
            self.fields = fields
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
        case .pairCommit: return .pairCommit
        case .pairNonce: return .pairNonce
        case .datagramKey: return .datagramKey
        case .data: return .data
        case .keepalive: return .keepalive
        case .goodbye: return .goodbye
        case .datagramEndpoint: return .datagramEndpoint
        case .sessionListener: return .sessionListener
        case .members: return .members
        case .resumeSecret: return .resumeSecret
        case .resume: return .resume
        case .resumed: return .resumed
        case .ack: return .ack
        case .open: return .open
        case .chunk: return .chunk
        case .end: return .end
        case .reset: return .reset
        case .credit: return .credit
        case .done: return .done
        case .block: return .block
        case .have: return .have
        }
    }
}
