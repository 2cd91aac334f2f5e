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
        guard let length = try bodyLength(buffer, maximumFrameLength: maximumFrameLength) else { return nil }
        return try parse(&buffer, bodyLength: length)
    }

    /// Reads and consumes the frame at the front of `buffer` whose body length ``bodyLength(_:maximumFrameLength:)``
    /// has checked already; `nil` until all of it has arrived.
    ///
    /// - Parameters:
    ///   - buffer: bytes received; the frame's are consumed once it is whole.
    ///   - length: the body's length, as checked.
    /// - Returns: the frame, or `nil`.
    /// - Throws: ``ProtocolError`` for an unknown type or a malformed body.
    package static func parse(_ buffer: inout ByteBuffer, bodyLength length: Int) throws(ProtocolError) -> Frame? {
        guard buffer.readableBytes >= 4 + length else { return nil }
        buffer.moveReaderIndex(forwardBy: 4)
        var body = buffer.readSlice(length: length)!
        return try parse(body: &body)
    }

    /// The length of the body of the frame at the front of `buffer`, checked against the limit; `nil`
    /// until its four bytes have arrived. Nothing is consumed.
    ///
    /// - Parameters:
    ///   - buffer: bytes received.
    ///   - maximumFrameLength: the largest frame body accepted.
    /// - Returns: the body's length (type byte and payload), or `nil`.
    /// - Throws: ``ProtocolError`` for an empty frame or a length over the limit.
    package static func bodyLength(_ buffer: ByteBuffer, maximumFrameLength: Int) throws(ProtocolError) -> Int? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length > 0 else { throw .emptyFrame }
        guard length <= maximumFrameLength else { throw .frameTooLong(length: Int(length), limit: maximumFrameLength) }
        return Int(length)
    }

    /// Reads a frame from its whole body: the type byte and the payload.
    ///
    /// - Parameter body: the body, at least one byte; consumed.
    /// - Returns: the frame.
    /// - Throws: ``ProtocolError`` for an unknown type or a malformed body.
    package static func parse(body: inout ByteBuffer) throws(ProtocolError) -> Frame {
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
            let fields = try HandshakeFields.parse(&body, in: type)
            guard body.readableBytes == 0 else {
                throw .malformed(type, "\(body.readableBytes) bytes after the fields")
            }
            try requireMessageLength(fields, in: type)
            return .accept(fields)
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
            let fields = try HandshakeFields.parse(&body, in: type)
            try requireMessageLength(fields, in: type)
            guard body.readableBytes <= WireProtocol.maximumContextLength else {
                throw .malformed(
                    type,
                    "context of \(body.readableBytes) bytes exceeds \(WireProtocol.maximumContextLength)"
                )
            }
            return .invite(Frame.Invite(timeoutMilliseconds: timeout, fields: fields, context: body))
        case .hello:
            return .hello(try parseHello(&body))
        case .pairCommit, .pairNonce, .datagramKey:
            guard body.readableBytes == PairingExchange.nonceLength else {
                throw .malformed(type, "body must be 32 bytes, got \(body.readableBytes)")
            }
            let bytes = body.readBytes(length: PairingExchange.nonceLength)!
            switch type {
            case .pairCommit: return .pairCommit(bytes)
            case .pairNonce: return .pairNonce(bytes)
            default: return .datagramKey(bytes)
            }
        case .datagramEndpoint:
            guard body.readableBytes == 10, let port = body.readInteger(as: UInt16.self),
                let token = body.readInteger(as: UInt64.self)
            else {
                throw .malformed(
                    type,
                    "body must be a 2-byte port and an 8-byte token, got \(body.readableBytes) bytes"
                )
            }
            guard port != 0 else { throw .malformed(type, "port 0") }
            return .datagramEndpoint(port: port, token: token)
        case .sessionListener:
            guard body.readableBytes == 2, let port = body.readInteger(as: UInt16.self), port != 0 else {
                throw .malformed(type, "body must be a non-zero 2-byte port, got \(body.readableBytes) bytes")
            }
            return .sessionListener(port: port)
        case .members:
            return .members(try parseMembers(&body))
        case .resumeSecret:
            guard body.readableBytes == WireProtocol.resumeSecretLength else {
                throw .malformed(
                    type,
                    "body must be a \(WireProtocol.resumeSecretLength)-byte secret, got \(body.readableBytes) bytes"
                )
            }
            return .resumeSecret(body.readBytes(length: body.readableBytes)!)
        case .resume:
            return .resume(try parseResume(&body))
        case .resumed, .ack:
            guard body.readableBytes == 8, let count = body.readInteger(as: UInt64.self) else {
                throw .malformed(type, "body must be an 8-byte count, got \(body.readableBytes) bytes")
            }
            return type == .ack ? .ack(count) : .resumed(nextExpected: count)
        case .open, .chunk, .end, .reset, .credit, .done, .block, .have:
            return try parseChannelFrame(type: type, body: &body)
        }
    }

    private static func parseResume(_ body: inout ByteBuffer) throws(ProtocolError) -> Frame.Resume {
        guard body.readableBytes == 16 + WireProtocol.resumeSecretLength + 8,
            let uuidBytes = body.readBytes(length: 16),
            let secret = body.readBytes(length: WireProtocol.resumeSecretLength),
            let next = body.readInteger(as: UInt64.self)
        else {
            throw .malformed(.resume, "body must be a peer id, a secret and a count, got \(body.readableBytes) bytes")
        }
        let id = uuidBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        return Frame.Resume(peer: id, secret: secret, nextExpected: next)
    }

    private static func parseMembers(_ body: inout ByteBuffer) throws(ProtocolError) -> [Frame.Member] {
        guard let count = body.readInteger(as: UInt8.self) else { throw .malformed(.members, "missing the count") }
        var members: [Frame.Member] = []
        for index in 0..<Int(count) {
            guard let uuidBytes = body.readBytes(length: 16), let nameLength = body.readInteger(as: UInt8.self),
                let nameBytes = body.readBytes(length: Int(nameLength)),
                let name = String(validating: nameBytes, as: UTF8.self),
                let addressLength = body.readInteger(as: UInt8.self), addressLength == 4 || addressLength == 16,
                let address = body.readBytes(length: Int(addressLength)),
                let port = body.readInteger(as: UInt16.self), port != 0
            else {
                throw .malformed(.members, "member \(index) of \(count) is truncated or invalid")
            }
            let id = uuidBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            guard let peer = try? PeerID(id: id, displayName: name) else {
                throw .malformed(.members, "member \(index) has an invalid display name")
            }
            members.append(Frame.Member(peer: peer, address: address, port: port))
        }
        guard body.readableBytes == 0 else {
            throw .malformed(.members, "\(body.readableBytes) bytes after \(count) members")
        }
        return members
    }

    private static func parseChannelFrame(type: FrameType, body: inout ByteBuffer) throws(ProtocolError) -> Frame {
        guard let channel = body.readInteger(as: UInt32.self) else {
            throw .malformed(type, "missing the 4-byte channel number")
        }
        guard channel != 0 else { throw .malformed(type, "channel 0 is not a channel") }
        switch type {
        case .chunk:
            guard (1...WireProtocol.maximumChunkLength).contains(body.readableBytes) else {
                throw .malformed(
                    type,
                    "\(body.readableBytes) bytes; a chunk carries 1-\(WireProtocol.maximumChunkLength)"
                )
            }
            return .chunk(channel: channel, body)
        case .open:
            guard let kindByte = body.readInteger(as: UInt8.self), let size = body.readInteger(as: UInt64.self) else {
                throw .malformed(type, "truncated before the name")
            }
            guard let kind = ChannelKind(rawValue: kindByte) else {
                throw .malformed(type, "unknown channel kind \(kindByte)")
            }
            guard kind != .stream || size == 0 else { throw .malformed(type, "a stream has no size") }
            // A message has no name; a stream or a resource has one.
            let shortestName = kind == .message ? 0 : 1
            guard (shortestName...WireProtocol.maximumChannelNameLength).contains(body.readableBytes) else {
                throw .malformed(
                    type,
                    "name of \(body.readableBytes) bytes; a \(kind)'s is \(shortestName)-\(WireProtocol.maximumChannelNameLength)"
                )
            }
            let name = body.readBytes(length: body.readableBytes)!
            return .open(Frame.Open(channel: channel, kind: kind, size: size, name: name))
        case .end:
            switch body.readableBytes {
            case 0: return .end(channel: channel, digest: nil)
            case WireProtocol.digestLength:
                return .end(channel: channel, digest: body.readBytes(length: body.readableBytes))
            default: throw .malformed(type, "\(body.readableBytes) bytes after the channel; expected 0 or 32")
            }
        case .reset:
            guard body.readableBytes == 1, let code = body.readInteger(as: UInt8.self) else {
                throw .malformed(type, "expected one code byte after the channel")
            }
            return .reset(channel: channel, ChannelResetCode(wireValue: code))
        case .credit:
            guard body.readableBytes == 4, let increment = body.readInteger(as: UInt32.self), increment > 0 else {
                throw .malformed(type, "expected a non-zero 4-byte increment after the channel")
            }
            return .credit(channel: channel, increment: increment)
        case .block:
            guard body.readableBytes == 4 + WireProtocol.blockDigestLength,
                let index = body.readInteger(as: UInt32.self)
            else {
                throw .malformed(type, "expected a 4-byte index and an 8-byte digest after the channel")
            }
            guard index < WireProtocol.maximumResourceBlocks else {
                throw .malformed(type, "block \(index); a resource has at most \(WireProtocol.maximumResourceBlocks)")
            }
            return .block(
                channel: channel,
                index: index,
                digest: body.readBytes(length: WireProtocol.blockDigestLength)!
            )
        case .have:
            guard let digest = body.readBytes(length: WireProtocol.digestLength),
                body.readableBytes <= WireProtocol.maximumResourceBlocks / 8
            else {
                throw .malformed(
                    type,
                    "expected a 32-byte digest and a bitmap of at most \(WireProtocol.maximumResourceBlocks / 8) bytes"
                )
            }
            return .have(
                channel: channel,
                Frame.Have(digest: digest, bitmap: body.readBytes(length: body.readableBytes)!)
            )
        default:  // .done
            try expectEmpty(body, type)
            return .done(channel: channel)
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
        guard body.readableBytes >= Int(nameLength) + 2 else {
            throw .malformed(
                .hello,
                "name length \(nameLength) but \(body.readableBytes) bytes follow (name, encryption byte, fields)"
            )
        }
        guard let nameBytes = body.readBytes(length: Int(nameLength)),
            let name = String(validating: nameBytes, as: UTF8.self)
        else {
            throw .malformed(.hello, "display name is not valid UTF-8")
        }
        let encryptionByte = body.readInteger(as: UInt8.self)!
        guard let encryption = EncryptionPreference(rawValue: encryptionByte) else {
            throw .malformed(.hello, "unknown encryption preference \(encryptionByte)")
        }
        let fields = try HandshakeFields.parse(&body, in: .hello)
        guard body.readableBytes == 0 else {
            throw .malformed(.hello, "\(body.readableBytes) bytes after the fields")
        }
        let id = uuidBytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        do {
            let peer = try PeerID(id: id, displayName: name)
            return Frame.Hello(version: version, peer: peer, encryption: encryption, fields: fields)
        } catch {
            throw .malformed(.hello, error.description)
        }
    }

    /// INVITE and ACCEPT say the largest message their sender accepts.
    private static func requireMessageLength(_ fields: HandshakeFields, in type: FrameType) throws(ProtocolError) {
        guard fields.maximumMessageLength != nil else {
            throw .malformed(type, "the maximum message length is missing")
        }
    }

    private static func expectEmpty(_ body: ByteBuffer, _ type: FrameType) throws(ProtocolError) {
        guard body.readableBytes == 0 else {
            throw .malformed(type, "body must be empty, got \(body.readableBytes) bytes")
        }
    }
}
