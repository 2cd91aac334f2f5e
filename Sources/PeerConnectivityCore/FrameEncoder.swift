import NIOCore

/// Writes frames in the wire format (see docs/PROTOCOL.md).
package enum FrameEncoder {
    /// Appends one frame to `buffer`.
    ///
    /// - Parameters:
    ///   - frame: the frame to write.
    ///   - buffer: the buffer to append to.
    package static func encode(_ frame: Frame, into buffer: inout ByteBuffer) {
        switch frame {
        case .hello(let hello):
            let name = hello.peer.displayName.utf8
            writeHeader(type: .hello, payloadLength: 4 + 2 + 16 + 1 + name.count, into: &buffer)
            buffer.writeBytes(WireProtocol.magic)
            buffer.writeInteger(hello.version)
            withUnsafeBytes(of: hello.peer.id.uuid) { _ = buffer.writeBytes($0) }
            buffer.writeInteger(UInt8(name.count))
            buffer.writeBytes(name)
        case .invite(let invite):
            writeHeader(type: .invite, payloadLength: 4 + invite.context.readableBytes, into: &buffer)
            buffer.writeInteger(invite.timeoutMilliseconds)
            buffer.writeImmutableBuffer(invite.context)
        case .accept, .keepalive:
            writeHeader(type: frame.type, payloadLength: 0, into: &buffer)
        case .decline(let reason), .goodbye(let reason):
            writeHeader(type: frame.type, payloadLength: 1, into: &buffer)
            buffer.writeInteger(reason.wireValue)
        case .data(let payload):
            writeHeader(type: .data, payloadLength: payload.readableBytes, into: &buffer)
            buffer.writeImmutableBuffer(payload)
        }
    }

    /// One frame as a new buffer.
    ///
    /// - Parameters:
    ///   - frame: the frame to write.
    ///   - allocator: where the buffer comes from.
    /// - Returns: the encoded frame.
    package static func buffer(for frame: Frame, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: WireProtocol.headerLength + 64)
        encode(frame, into: &buffer)
        return buffer
    }

    /// A DATA frame carrying `bytes`, in a single buffer (the bytes are copied once).
    ///
    /// - Parameters:
    ///   - bytes: the message.
    ///   - allocator: where the buffer comes from.
    /// - Returns: the encoded frame.
    package static func dataFrame(
        _ bytes: some Collection<UInt8>,
        allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: WireProtocol.headerLength + bytes.count)
        writeHeader(type: .data, payloadLength: bytes.count, into: &buffer)
        buffer.writeBytes(bytes)
        return buffer
    }

    /// Writes the 4-byte length (type byte plus payload) and the type byte.
    private static func writeHeader(type: FrameType, payloadLength: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(1 + payloadLength))
        buffer.writeInteger(type.rawValue)
    }
}
