import NIOCore

/// One encoded frame, in one buffer or, for a large DATA frame, several written back to back.
package struct EncodedFrame: Sendable {
    /// The header and the first bytes of the body (all of it for frames up to ``FrameEncoder/chunkLength``).
    package var head: ByteBuffer
    /// The rest of the body, in order; empty for most frames.
    package var rest: [ByteBuffer]

    package init(head: ByteBuffer, rest: [ByteBuffer] = []) {
        self.head = head
        self.rest = rest
    }

    /// The frame's size on the wire.
    package var byteCount: Int {
        rest.reduce(head.readableBytes) { $0 + $1.readableBytes }
    }
}
