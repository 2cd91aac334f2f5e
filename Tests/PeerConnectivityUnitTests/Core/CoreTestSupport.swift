import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTesting

/// Peers and frames shared by the core tests.
enum Fixtures {
    /// This side of every connection under test.
    static let alice = try! PeerID(id: uuid(0xA1), displayName: "alice")
    /// The peer alice talks to.
    static let bob = try! PeerID(id: uuid(0xB0), displayName: "bob")
    /// A third peer, who answers when bob was expected.
    static let eve = try! PeerID(id: uuid(0xE0), displayName: "eve")

    /// The frame limit a session with the default message length enforces once connected.
    static let sessionLimit = WireProtocol.maximumFrameLength(
        forMessageLength: WireProtocol.defaultMaximumMessageLength
    )

    /// A UUID whose bytes are all `byte`, so tests are reproducible.
    static func uuid(_ byte: UInt8) -> UUID {
        UUID(uuid: (byte, byte, byte, byte, byte, byte, 0x40, byte, 0x80, byte, byte, byte, byte, byte, byte, byte))
    }

    /// A buffer holding `bytes`.
    static func buffer(_ bytes: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: bytes)
    }

    /// A buffer holding the UTF-8 of `string`.
    static func buffer(_ string: String) -> ByteBuffer {
        ByteBuffer(string: string)
    }

    /// `count` bytes of a repeating pattern, so a misplaced slice does not compare equal by chance.
    ///
    /// Written in place: a `writeInteger` per byte, unoptimized as tests are built, was most of the frame codec
    /// suite's time (5.5 s, now 2.2 s), all of it on the cooperative pool's threads that the tests beside it need.
    static func pattern(count: Int, seed: UInt8 = 0) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            let bytes = pointer.bindMemory(to: UInt8.self)
            var index = 0
            while index < count {
                bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) ^ seed
                index += 1
            }
            return count
        }
        return buffer
    }

    /// One frame of each type.
    static let oneOfEachType: [Frame] = [
        .hello(Frame.Hello(peer: bob)),
        .invite(Frame.Invite(timeoutMilliseconds: 30_000, fields: .defaultLimits, context: buffer("join me"))),
        .accept(.defaultLimits),
        .decline(.declined),
        .pairCommit(Array(repeating: 0xC0, count: 32)),
        .pairNonce(Array(repeating: 0x11, count: 32)),
        .datagramKey(Array(repeating: 0x22, count: 32)),
        .data(buffer("hello, bob")),
        .keepalive,
        .goodbye(.localDisconnect),
        .datagramEndpoint(port: 40_000, token: 0x0123_4567_89AB_CDEF),
        .sessionListener(port: 40_001),
        .members([
            Frame.Member(peer: alice, address: [127, 0, 0, 1], port: 40_002),
            Frame.Member(peer: bob, address: Array(repeating: 0, count: 15) + [1], port: 40_003),
        ]),
        .open(Frame.Open(channel: 2, kind: .resource, size: 1234, name: Array("photo.jpg".utf8))),
        .chunk(channel: 2, buffer("some bytes")),
        .end(channel: 2, digest: Array(repeating: 0xAB, count: WireProtocol.digestLength)),
        .reset(channel: 2, .cancelled),
        .credit(channel: 1, increment: 65_536),
        .done(channel: 1),
        .block(channel: 1, index: 3, digest: Array(repeating: 0xAB, count: WireProtocol.blockDigestLength)),
        .have(channel: 2, Frame.Have(digest: Array(repeating: 0xCD, count: 32), bitmap: [0b101])),
        .resumeSecret(Array(0..<UInt8(WireProtocol.resumeSecretLength))),
        .resume(Frame.Resume(peer: bob.id, secret: Array(repeating: 0x5A, count: 16), nextExpected: 42)),
        .resumed(nextExpected: 7),
        .ack(1_000_000),
    ]

    /// A sample frame of `type`.
    static func sample(_ type: FrameType) -> Frame {
        oneOfEachType.first { $0.type == type }!
    }

    /// The bytes of a frame with the given length prefix, type byte and payload, written by hand.
    static func rawFrame(length: UInt32? = nil, type: UInt8, payload: [UInt8] = []) -> [UInt8] {
        let length = length ?? UInt32(1 + payload.count)
        return withUnsafeBytes(of: length.bigEndian, Array.init) + [type] + payload
    }

    /// A HELLO body written by hand: magic, version, UUID, name length, name, encryption preference.
    static func helloPayload(
        magic: [UInt8] = WireProtocol.magic,
        version: UInt16 = WireProtocol.version,
        id: UUID = bob.id,
        nameLength: UInt8? = nil,
        name: [UInt8] = Array("bob".utf8),
        encryption: [UInt8] = [0],
        fields: [UInt8] = [0]
    ) -> [UInt8] {
        let head: [UInt8] = magic + withUnsafeBytes(of: version.bigEndian, Array.init)
        let idBytes: [UInt8] = withUnsafeBytes(of: id.uuid, Array.init)
        let length: [UInt8] = [nameLength ?? UInt8(name.count)]
        return head + idBytes + length + name + encryption + fields
    }

    /// A field list with the largest message length, as INVITE and ACCEPT carry it.
    static func messageLengthField(_ limit: UInt32 = 1 << 20) -> [UInt8] {
        [1, 1, 0, 4] + withUnsafeBytes(of: limit.bigEndian, Array.init)
    }

    /// Parses one frame from `bytes`.
    static func parse(_ bytes: [UInt8], limit: Int = sessionLimit) throws(ProtocolError) -> Frame? {
        var buffer = ByteBuffer(bytes: bytes)
        return try FrameParser.parse(&buffer, maximumFrameLength: limit)
    }
}

/// What a `.reportClosed` says to the owner, without what it says about the handshake's promises.
struct ReportedClose: Equatable {
    var peer: PeerID?
    var reason: DisconnectReason
}

extension ConnectionStateMachine.Action {
    /// The peer and reason of a `.reportClosed`; `nil` for any other action.
    var reportedClose: ReportedClose? {
        guard case .reportClosed(let peer, let reason, _, _) = self else { return nil }
        return ReportedClose(peer: peer, reason: reason)
    }
}
