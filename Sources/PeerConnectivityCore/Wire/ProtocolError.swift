/// Input that breaks the wire protocol: the connection that sent it is closed with this reason.
package struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case frameTooLong(length: Int, limit: Int)
        case emptyFrame
        case unknownFrameType(UInt8)
        case malformed(FrameType, String)
        case unexpectedFrame(FrameType, state: String)
        case badMagic
        case incompatibleVersion(UInt16)
        case truncatedFrame(Int)
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// A length prefix above the limit; nothing of the body is read or allocated.
    package static func frameTooLong(length: Int, limit: Int) -> ProtocolError {
        ProtocolError(.frameTooLong(length: length, limit: limit))
    }
    /// A length prefix of zero: a frame needs at least its type byte.
    package static let emptyFrame = ProtocolError(.emptyFrame)
    /// A type byte this version does not know.
    package static func unknownFrameType(_ type: UInt8) -> ProtocolError { ProtocolError(.unknownFrameType(type)) }
    /// A frame whose body does not parse.
    package static func malformed(_ type: FrameType, _ why: String) -> ProtocolError {
        ProtocolError(.malformed(type, why))
    }
    /// A frame that is valid but not allowed in the connection's current state.
    package static func unexpectedFrame(_ type: FrameType, state: String) -> ProtocolError {
        ProtocolError(.unexpectedFrame(type, state: state))
    }
    /// A HELLO that does not start with the magic bytes "PCON".
    package static let badMagic = ProtocolError(.badMagic)
    /// A HELLO with a protocol version this library does not speak.
    package static func incompatibleVersion(_ version: UInt16) -> ProtocolError {
        ProtocolError(.incompatibleVersion(version))
    }
    /// The connection ended in the middle of a frame.
    package static func truncatedFrame(bytesLeft: Int) -> ProtocolError { ProtocolError(.truncatedFrame(bytesLeft)) }

    /// Whether the connection ended inside a frame (``truncatedFrame(bytesLeft:)``).
    package var isTruncation: Bool {
        if case .truncatedFrame = code { return true }
        return false
    }

    package var description: String {
        switch code {
        case .frameTooLong(let length, let limit): return "frame length \(length) exceeds the limit of \(limit) bytes"
        case .emptyFrame: return "frame length 0 (a frame needs its type byte)"
        case .unknownFrameType(let type): return "unknown frame type 0x\(String(type, radix: 16))"
        case .malformed(let type, let why): return "malformed \(type) frame: \(why)"
        case .unexpectedFrame(let type, let state): return "unexpected \(type) frame while \(state)"
        case .badMagic: return "HELLO does not start with the magic bytes \"PCON\": not a PeerConnectivity peer"
        case .incompatibleVersion(let version):
            return "peer speaks protocol version \(version), this library speaks \(WireProtocol.version)"
        case .truncatedFrame(let left): return "connection ended inside a frame (\(left) bytes of it received)"
        }
    }

    /// The reason reported to the application when this error closes a connection.
    package var disconnectReason: DisconnectReason {
        switch code {
        case .incompatibleVersion: return DisconnectReason.incompatibleVersion.with(detail: description)
        default: return DisconnectReason.protocolViolation.with(detail: description)
        }
    }
}
