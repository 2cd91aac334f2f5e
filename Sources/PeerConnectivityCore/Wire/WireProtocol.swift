/// Constants of the PeerConnectivity wire protocol (see docs/PROTOCOL.md).
package enum WireProtocol {
    /// The four bytes that open every HELLO frame: "PCON".
    package static let magic: [UInt8] = [0x50, 0x43, 0x4F, 0x4E]

    /// The protocol version this library speaks.
    package static let version: UInt16 = 5

    /// Bytes before a frame's body: the 4-byte length and the 1-byte type.
    package static let headerLength = 5

    /// The largest data message a session sends or accepts by default: 16 MiB.
    package static let defaultMaximumMessageLength = 16 << 20

    /// The largest reliable message sent as one DATA frame: 1 MiB. A larger one travels as a channel of
    /// kind ``ChannelKind/message`` (OPEN, CHUNKs, END), paced with the other channels, so that it never
    /// holds up the messages and chunks behind it for long, and no frame needs to be larger than this.
    package static let inlineMessageLimit = 1 << 20

    /// The largest invitation context: 64 KiB.
    package static let maximumContextLength = 1 << 16

    /// Bytes before an unreliable message in its UDP datagram: the receiver's 8-byte token.
    package static let datagramHeaderLength = 8

    /// The largest unreliable message: one UDP datagram (65,507 bytes of payload over IPv4) less the
    /// token, rounded down. Above about 1,400 bytes IP fragments the datagram, and losing any
    /// fragment loses it whole.
    package static let maximumUnreliableMessageLength = 65_000

    /// The largest payload of one CHUNK frame: 64 KiB.
    package static let maximumChunkLength = 1 << 16

    /// The receive window every channel starts with: the opener may send this many bytes before
    /// the first CREDIT.
    package static let initialChannelWindow = 256 << 10

    /// The largest window a receiver may grant on one channel (credit beyond it is a protocol violation).
    package static let maximumChannelWindow = Int(Int32.max)

    /// The longest channel name (OPEN), in bytes.
    package static let maximumChannelNameLength = 16 << 10

    /// The length of a SHA-256 digest: a resource's root in its END, and HAVE's digest over the blocks
    /// held.
    package static let digestLength = 32

    /// The length of a block's digest in BLOCK: 8 bytes, XXH64 or XXH3-64 (see ``BlockHasher``).
    package static let blockDigestLength = 8

    /// The length of a resource's blocks (the last may be shorter): each crosses after a BLOCK frame
    /// carrying its digest (``BlockHasher``), and is checked on its own as it lands.
    package static let resourceBlockLength = 1 << 20

    /// The most blocks a resource may have: its HAVE bitmap fits in 64 KiB, so a resource is at most
    /// 512 GiB.
    package static let maximumResourceBlocks = (64 << 10) * 8

    /// The length of the secret in RESUME-SECRET and RESUME (reconnection).
    package static let resumeSecretLength = 16

    /// The largest frame body (type byte and payload) that frames of a connection accepting messages of
    /// up to `maximumMessageLength` bytes need: DATA up to the smaller of it and ``inlineMessageLimit``
    /// (larger messages come in CHUNKs), the largest INVITE, the largest CHUNK.
    ///
    /// - Parameter maximumMessageLength: the largest data message.
    /// - Returns: the frame length limit the decoder enforces.
    package static func maximumFrameLength(forMessageLength maximumMessageLength: Int) -> Int {
        1
            + max(
                min(maximumMessageLength, inlineMessageLimit),
                4 + HandshakeFields.maximumEncodedLength + maximumContextLength,
                maximumChunkLength + 4
            )
    }
}
