/// The frame length limit a ``FrameDecoder`` enforces, shared with the connection handler so the
/// limit can rise once the handshake is done: handshake frames are small, data frames are not.
///
/// Not `Sendable`: the decoder and the handler that share it run on the same event loop.
package final class FrameLengthLimit {
    /// The largest frame body (type byte and payload) accepted now.
    package var value: Int

    /// The limit while handshaking: a HELLO, or an INVITE with the most fields and the largest context.
    package static let handshake = 1 + 4 + HandshakeFields.maximumEncodedLength + WireProtocol.maximumContextLength

    package init(_ value: Int) {
        self.value = value
    }
}
