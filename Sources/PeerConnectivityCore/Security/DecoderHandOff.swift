import NIOCore

/// Lets the connection handler stop a ``FrameDecoder`` after the HELLO that decides on TLS, and
/// take the bytes the decoder holds past it (the start of the peer's TLS handshake), to hand them
/// to the TLS handler.
///
/// Not `Sendable`: the decoder and the handler that share it run on the same event loop.
package final class DecoderHandOff {
    /// Once set, the decoder decodes nothing more; on removal it leaves its bytes in ``leftover``.
    package var isHandingOff = false
    /// The bytes the decoder held when it was removed.
    package var leftover: ByteBuffer?

    package init() {}
}
