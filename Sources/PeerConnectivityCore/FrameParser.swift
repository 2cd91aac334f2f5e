import Foundation
import NIOCore

/// Reads frames off the front of a buffer: the pure half of ``FrameDecoder``.
package enum FrameParser {
    /// Reads one whole frame from the front of `buffer`, or nothing if it has not all arrived.
    ///
    /// The length prefix is checked before anything else, so an oversize frame is rejected as soon
    /// as its first four bytes arrive, before any of its body is buffered.
    ///
    /// - Parameters:
    ///   - buffer: bytes received; a frame read from it is consumed.
    ///   - maximumFrameLength: the largest frame body (type byte and payload) accepted.
    /// - Returns: the frame, or `nil` when more bytes are needed.
    /// - Throws: ``ProtocolError`` for a length over the limit, an unknown type or a malformed body.
    package static func parse(_ buffer: inout ByteBuffer, maximumFrameLength: Int) throws(ProtocolError) -> Frame? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length > 0 else { throw .emptyFrame }
        guard length <= maximumFrameLength else { throw .frameTooLong(length: Int(length), limit: maximumFrameLength) }
        guard buffer.readableBytes >= 4 + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 4)
        var body = buffer.readSlice(length: Int(length))!
        let typeByte = body.readInteger(as: UInt8.self)!
        guard let type = FrameType(rawValue: typeByte) else { throw .unknownFrameType(typeByte) }
        return try parseBody(type: type, body: &body)
    }

    private static func parseBody(type: FrameType, body: inout ByteBuffer) throws(ProtocolError) -> Frame {
        switch type {
        case .data:
            return .data(body)
        case .keepalive:
            try expectEmpty(body, type)
            return .keepalive
        case .accept:
            try expectEmpty(body, type)
            return .accept
        case .decline, .goodbye:
            guard body.readableBytes == 1, let reason = body.readInteger(as: UInt8.self) else {
                throw .malformed(type, "body must be one reason byte, got \(body.readableBytes) bytes")
            }
            let disconnectReason = DisconnectReason(wireValue: reason)
            return type == .decline ? .decline(disconnectReason) : .goodbye(disconnectReason)
        case .invite:
            guard let timeout = body.readInteger(as: UInt32.self) else {
                throw .malformed(type, "missing the 4-byte timeout")
            }
            guard body.readableBytes <= WireProtocol.maximumContextLength else {
                throw .malformed(
                    type,
                    "context of \(body.readableBytes) bytes exceeds \(WireProtocol.maximumContextLength)"
                )
            }
            return .invite(Frame.Invite(timeoutMilliseconds: timeout, context: body))
        case .hello:
            return .hello(try parseHello(&body))
        }
    }

    private static func parseHello(_ body: inout ByteBuffer) throws(ProtocolError) -> Frame.Hello {
        guard body.readBytes(length: 4) == WireProtocol.magic else { throw .badMagic }
        guard let version = body.readInteger(as: UInt16.self) else {
            throw .malformed(.hello, "missing the version")
        }
        guard version == WireProtocol.version else { throw .incompatibleVersion(version) }
        guard let uuidBytes = body.readBytes(length: 16), let nameLength = body.readInteger(as: UInt8.self) else {
            throw .malformed(.hello, "truncated before the display name")
        }
        guard body.readableBytes == Int(nameLength) else {
            throw .malformed(.hello, "name length \(nameLength) but \(body.readableBytes) bytes follow")
        }
        guard let nameBytes = body.readBytes(length: Int(nameLength)),
            let name = String(validating: nameBytes, as: UTF8.self)
        else {
            throw .malformed(.hello, "display name is not valid UTF-8")
        }
        let id = uuidBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        do {
            return Frame.Hello(version: version, peer: try PeerID(id: id, displayName: name))
        } catch {
            throw .malformed(.hello, error.description)
        }
    }

    private static func expectEmpty(_ body: ByteBuffer, _ type: FrameType) throws(ProtocolError) {
        guard body.readableBytes == 0 else {
            throw .malformed(type, "body must be empty, got \(body.readableBytes) bytes")
        }
    }
}
