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
            let length = 4 + 2 + 16 + 1 + name.count + 1 + hello.fields.encodedLength
            writeHeader(type: .hello, payloadLength: length, into: &buffer)
            buffer.writeBytes(WireProtocol.magic)
            buffer.writeInteger(hello.version)
            withUnsafeBytes(of: hello.peer.id.uuid) { _ = buffer.writeBytes($0) }
            buffer.writeInteger(UInt8(name.count))
            buffer.writeBytes(name)
            buffer.writeInteger(hello.encryption.rawValue)
            hello.fields.encode(into: &buffer)
        case .pairCommit(let bytes), .pairNonce(let bytes), .datagramKey(let bytes):
            writeHeader(type: frame.type, payloadLength: bytes.count, into: &buffer)
            buffer.writeBytes(bytes)
        case .invite(let invite):
            let length = 4 + invite.fields.encodedLength + invite.context.readableBytes
            writeHeader(type: .invite, payloadLength: length, into: &buffer)
            buffer.writeInteger(invite.timeoutMilliseconds)
            invite.fields.encode(into: &buffer)
            buffer.writeImmutableBuffer(invite.context)
        case .accept(let fields):
            writeHeader(type: .accept, payloadLength: fields.encodedLength, into: &buffer)
            fields.encode(into: &buffer)
        case .keepalive:
            writeHeader(type: frame.type, payloadLength: 0, into: &buffer)
        case .decline(let reason), .goodbye(let reason):
            writeHeader(type: frame.type, payloadLength: 1, into: &buffer)
            buffer.writeInteger(reason.wireValue)
        case .data(let payload):
            writeHeader(type: .data, payloadLength: payload.readableBytes, into: &buffer)
            buffer.writeImmutableBuffer(payload)
        case .datagramEndpoint(let port, let token):
            writeHeader(type: .datagramEndpoint, payloadLength: 2 + 8, into: &buffer)
            buffer.writeInteger(port)
            buffer.writeInteger(token)
        case .sessionListener(let port):
            writeHeader(type: .sessionListener, payloadLength: 2, into: &buffer)
            buffer.writeInteger(port)
        case .members(let members):
            let length = members.reduce(1) { $0 + 16 + 1 + $1.peer.displayName.utf8.count + 1 + $1.address.count + 2 }
            writeHeader(type: .members, payloadLength: length, into: &buffer)
            buffer.writeInteger(UInt8(members.count))
            for member in members {
                withUnsafeBytes(of: member.peer.id.uuid) { _ = buffer.writeBytes($0) }
                buffer.writeInteger(UInt8(member.peer.displayName.utf8.count))
                buffer.writeBytes(member.peer.displayName.utf8)
                buffer.writeInteger(UInt8(member.address.count))
                buffer.writeBytes(member.address)
                buffer.writeInteger(member.port)
            }
        case .resumeSecret(let secret):
            writeHeader(type: .resumeSecret, payloadLength: secret.count, into: &buffer)
            buffer.writeBytes(secret)
        case .resume(let resume):
            writeHeader(type: .resume, payloadLength: 16 + resume.secret.count + 8, into: &buffer)
            withUnsafeBytes(of: resume.peer.uuid) { _ = buffer.writeBytes($0) }
            buffer.writeBytes(resume.secret)
            buffer.writeInteger(resume.nextExpected)
        case .resumed(let count), .ack(let count):
            writeHeader(type: frame.type, payloadLength: 8, into: &buffer)
            buffer.writeInteger(count)
        case .open(let open):
            writeHeader(type: .open, payloadLength: 4 + 1 + 8 + open.name.count, into: &buffer)
            buffer.writeInteger(open.channel)
            buffer.writeInteger(open.kind.rawValue)
            buffer.writeInteger(open.size)
            buffer.writeBytes(open.name)
        case .chunk(let channel, let payload):
            writeHeader(type: .chunk, payloadLength: 4 + payload.readableBytes, into: &buffer)
            buffer.writeInteger(channel)
            buffer.writeImmutableBuffer(payload)
        case .end(let channel, let digest):
            writeHeader(type: .end, payloadLength: 4 + (digest?.count ?? 0), into: &buffer)
            buffer.writeInteger(channel)
            if let digest { buffer.writeBytes(digest) }
        case .reset(let channel, let code):
            writeHeader(type: .reset, payloadLength: 4 + 1, into: &buffer)
            buffer.writeInteger(channel)
            buffer.writeInteger(code.rawValue)
        case .credit(let channel, let increment):
            writeHeader(type: .credit, payloadLength: 4 + 4, into: &buffer)
            buffer.writeInteger(channel)
            buffer.writeInteger(increment)
        case .done(let channel):
            writeHeader(type: .done, payloadLength: 4, into: &buffer)
            buffer.writeInteger(channel)
        case .block(let channel, let index, let digest):
            writeHeader(type: .block, payloadLength: 4 + 4 + digest.count, into: &buffer)
            buffer.writeInteger(channel)
            buffer.writeInteger(index)
            buffer.writeBytes(digest)
        case .have(let channel, let have):
            writeHeader(type: .have, payloadLength: 4 + have.digest.count + have.bitmap.count, into: &buffer)
            buffer.writeInteger(channel)
            buffer.writeBytes(have.digest)
            buffer.writeBytes(have.bitmap)
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

    /// The largest buffer a DATA frame is encoded into: larger messages are split over several
    /// buffers (one frame on the wire). Buffers this small come from malloc's arenas and are reused,
    /// where one large buffer per message would be fresh memory whose every page faults on first touch.
    package static let chunkLength = 64 << 10

    /// A DATA frame carrying `bytes`, copied once into buffers of at most ``chunkLength`` bytes.
    ///
    /// - Parameters:
    ///   - bytes: the message.
    ///   - makeBuffer: gives an empty buffer with room for the bytes asked for (a pool's, or a new one).
    /// - Returns: the encoded frame.
    package static func dataFrame(
        _ bytes: UnsafeRawBufferPointer,
        makeBuffer: (Int) -> ByteBuffer = { ByteBufferAllocator().buffer(capacity: $0) }
    ) -> EncodedFrame {
        let headLength = min(bytes.count, chunkLength - WireProtocol.headerLength)
        var head = makeBuffer(WireProtocol.headerLength + headLength)
        let start = UnsafeRawBufferPointer(rebasing: bytes[0..<headLength])
        writeHeader(type: .data, payloadLength: bytes.count, into: &head, then: start)
        guard headLength < bytes.count else { return EncodedFrame(head: head) }
        var rest: [ByteBuffer] = []
        rest.reserveCapacity((bytes.count - headLength + chunkLength - 1) / chunkLength)
        var offset = headLength
        while offset < bytes.count {
            let end = min(offset + chunkLength, bytes.count)
            var chunk = makeBuffer(end - offset)
            chunk.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            rest.append(chunk)
            offset = end
        }
        return EncodedFrame(head: head, rest: rest)
    }

    /// A CHUNK frame carrying `bytes` (at most ``WireProtocol/maximumChunkLength``), copied once
    /// into one buffer.
    ///
    /// - Parameters:
    ///   - channel: the channel the bytes belong to.
    ///   - bytes: the payload.
    ///   - makeBuffer: gives an empty buffer with room for the bytes asked for (a pool's, or a new one).
    /// - Returns: the encoded frame.
    package static func chunkFrame(
        channel: UInt32,
        _ bytes: UnsafeRawBufferPointer,
        makeBuffer: (Int) -> ByteBuffer = { ByteBufferAllocator().buffer(capacity: $0) }
    ) -> ByteBuffer {
        precondition((1...WireProtocol.maximumChunkLength).contains(bytes.count), "chunk of \(bytes.count) bytes")
        var buffer = makeBuffer(chunkHeaderLength + bytes.count)
        writeChunkHeader(channel: channel, payloadLength: bytes.count, into: &buffer)
        buffer.writeBytes(bytes)
        return buffer
    }

    /// The bytes before a CHUNK frame's payload: the frame header and the channel number.
    package static let chunkHeaderLength = WireProtocol.headerLength + 4

    /// The payload of the CHUNK frames this side sends (the peer accepts up to
    /// ``WireProtocol/maximumChunkLength``): a frame fills one buffer of ``chunkLength`` bytes, where a
    /// full 64 KiB payload would need a buffer of twice that (capacities are powers of two).
    package static let chunkPayloadLength = chunkLength - chunkHeaderLength

    /// Writes the header of a CHUNK frame whose payload of `payloadLength` bytes follows.
    ///
    /// - Parameters:
    ///   - channel: the channel the payload belongs to.
    ///   - payloadLength: the payload's length, at most ``WireProtocol/maximumChunkLength``.
    ///   - buffer: the buffer to append to.
    package static func writeChunkHeader(channel: UInt32, payloadLength: Int, into buffer: inout ByteBuffer) {
        writeHeader(type: .chunk, payloadLength: 4 + payloadLength, into: &buffer)
        buffer.writeInteger(channel)
    }

    /// Writes the 4-byte length (type byte plus payload) and the type byte, then `bytes` (the payload or
    /// its start), in one write: the buffer's room and ownership are checked once for all of them, where a
    /// write of each field checks them each time (most of what a small message's encoding costs).
    private static func writeHeader(
        type: FrameType,
        payloadLength: Int,
        into buffer: inout ByteBuffer,
        then bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) {
        let length = UInt32(1 + payloadLength)
        let written = WireProtocol.headerLength + bytes.count
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: written) { room in
            room.storeBytes(of: length.bigEndian, as: UInt32.self)
            room[4] = type.rawValue
            if let start = bytes.baseAddress {
                (room.baseAddress! + WireProtocol.headerLength).copyMemory(from: start, byteCount: bytes.count)
            }
            return written
        }
    }
}
