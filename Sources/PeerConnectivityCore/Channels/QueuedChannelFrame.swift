import NIOCore

/// One channel frame waiting in the ``BulkQueue``: its bytes in one buffer, or a CHUNK's header and a
/// payload the writer handed over as it is, uncopied. The two are taken and written together, never
/// apart: nothing may come between a frame's header and its payload on the wire.
package struct QueuedChannelFrame: QueuedFrame {
    /// The frame's bytes, or a CHUNK's header when ``payload`` holds its payload.
    package var head: ByteBuffer
    /// A CHUNK's payload, written right after ``head``; `nil` when ``head`` is the whole frame.
    package var payload: ByteBuffer?

    /// A frame in one buffer.
    package init(_ frame: ByteBuffer) {
        self.head = frame
        self.payload = nil
    }

    /// A CHUNK frame as its header and its payload.
    package init(header: ByteBuffer, payload: ByteBuffer) {
        self.head = header
        self.payload = payload
    }

    /// The frame's length on the wire.
    package var readableBytes: Int { head.readableBytes + (payload?.readableBytes ?? 0) }
}
