import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures

/// The fields that end HELLO, INVITE and ACCEPT (version 3): what each side accepts, and the rules that
/// let a later version add fields this one skips.
@Suite("Handshake fields")
struct HandshakeFieldsTests {
    private static func parse(_ bytes: [UInt8]) throws(ProtocolError) -> HandshakeFields {
        var buffer = ByteBuffer(bytes: bytes)
        return try HandshakeFields.parse(&buffer, in: .accept)
    }

    @Test("a field of a later version is skipped, before and after the known one")
    func unknownFieldsSkipped() throws {
        let fields = try Self.parse([3, 200, 0, 2, 7, 7] + F.messageLengthField(5_000).dropFirst() + [9, 0, 0])
        #expect(fields == HandshakeFields(maximumMessageLength: 5_000))
        let none = try Self.parse([1, 42, 0, 3, 1, 2, 3])
        #expect(none.maximumMessageLength == nil)
    }

    @Test("a known field twice, of the wrong length, or a list past the frame is malformed")
    func malformedLists() {
        #expect(throws: ProtocolError.malformed(.accept, "missing the field count")) { try Self.parse([]) }
        #expect(throws: ProtocolError.malformed(.accept, "the maximum message length appears twice")) {
            try Self.parse([2] + F.messageLengthField().dropFirst() + F.messageLengthField().dropFirst())
        }
        #expect(throws: ProtocolError.malformed(.accept, "the maximum message length is 2 bytes, not 4")) {
            try Self.parse([1, 1, 0, 2, 0, 1])
        }
        #expect(throws: ProtocolError.malformed(.accept, "field 2 of 2 runs past the frame")) {
            try Self.parse([2, 9, 0, 0, 9, 0, 5, 1])
        }
        #expect(throws: ProtocolError.malformed(.accept, "the fields take more than 1024 bytes")) {
            try Self.parse([1, 9, 0x04, 0x00] + Array(repeating: 0, count: 1024))
        }
    }

    @Test("the probe capability: no value, once; a side of this version announces it")
    func probeCapability() throws {
        #expect(try Self.parse([1, 3, 0, 0]) == HandshakeFields(probesDatagrams: true))
        #expect(throws: ProtocolError.malformed(.accept, "the probe capability appears twice")) {
            try Self.parse([2, 3, 0, 0, 3, 0, 0])
        }
        #expect(throws: ProtocolError.malformed(.accept, "the probe capability has 1 bytes, not 0")) {
            try Self.parse([1, 3, 0, 1, 1])
        }
        #expect(HandshakeFields.defaultLimits.probesDatagrams)
        #expect(!HandshakeFields().probesDatagrams)
    }

    @Test("the XXH3 capability: no value, once; a side of this version announces it; the kind follows the peer's")
    func xxh3Capability() throws {
        let fields = try Self.parse([2] + F.messageLengthField(5_000).dropFirst() + [4, 0, 0])
        #expect(fields == HandshakeFields(maximumMessageLength: 5_000, hashesBlocksWithXXH3: true))
        #expect(throws: ProtocolError.malformed(.accept, "the XXH3 capability appears twice")) {
            try Self.parse([2, 4, 0, 0, 4, 0, 0])
        }
        #expect(throws: ProtocolError.malformed(.accept, "the XXH3 capability has 2 bytes, not 0")) {
            try Self.parse([1, 4, 0, 2, 1, 1])
        }
        #expect(HandshakeFields.defaultLimits.hashesBlocksWithXXH3)
        #expect(!HandshakeFields().hashesBlocksWithXXH3)
        #expect(BlockDigestKind(agreedWith: fields) == .xxh3)
        #expect(BlockDigestKind(agreedWith: HandshakeFields(maximumMessageLength: 5_000)) == .xxh64, "an older peer")
        #expect(BlockDigestKind(agreedWith: nil) == .xxh64, "a connection that resumed a link says nothing")
    }

    @Test("INVITE and ACCEPT without the largest message length are malformed; HELLO may go without")
    func requiredInInviteAndAccept() throws {
        #expect(throws: ProtocolError.malformed(.accept, "the maximum message length is missing")) {
            try F.parse(F.rawFrame(type: 0x03, payload: [0]))
        }
        #expect(throws: ProtocolError.malformed(.invite, "the maximum message length is missing")) {
            try F.parse(F.rawFrame(type: 0x02, payload: [0, 0, 0, 1, 0] + Array("ctx".utf8)))
        }
        #expect(throws: ProtocolError.malformed(.accept, "1 bytes after the fields")) {
            try F.parse(F.rawFrame(type: 0x03, payload: F.messageLengthField() + [0]))
        }
        let hello = try F.parse(F.rawFrame(type: 0x01, payload: F.helloPayload(fields: [1, 77, 0, 1, 5])))
        #expect(hello == .hello(Frame.Hello(peer: F.bob)))
    }

    @Test("round trip: what is encoded parses back, and a limit over 4 GiB is announced as the largest UInt32")
    func roundTrip() throws {
        for fields in [HandshakeFields(), .defaultLimits, HandshakeFields(maximumMessageLength: .max)] {
            var buffer = ByteBuffer()
            fields.encode(into: &buffer)
            #expect(buffer.readableBytes == fields.encodedLength)
            #expect(try HandshakeFields.parse(&buffer, in: .hello) == fields)
        }
        #expect(HandshakeFields(acceptingMessagesUpTo: 1 << 40).maximumMessageLength == .max)
    }

    @Test("the folder capability: no value, once at most; this version says it; an older peer's fields lack it")
    func folderCapability() throws {
        let both = try Self.parse([2] + F.messageLengthField(5_000).dropFirst() + [2, 0, 0])
        #expect(both == HandshakeFields(maximumMessageLength: 5_000, readsFolders: true))
        #expect(try Self.parse(F.messageLengthField(5_000)).readsFolders == false, "a version-5 peer's ACCEPT")
        #expect(HandshakeFields.defaultLimits.readsFolders)
        #expect(throws: ProtocolError.malformed(.accept, "the folder capability has 1 bytes, not 0")) {
            try Self.parse([1, 2, 0, 1, 9])
        }
        #expect(throws: ProtocolError.malformed(.accept, "the folder capability appears twice")) {
            try Self.parse([2, 2, 0, 0, 2, 0, 0])
        }
    }

    @Test("each side learns the other's limit: the invitee from INVITE, the inviter from ACCEPT")
    func machinesLearnTheLimits() {
        var invitee = makeInvitee()
        _ = invitee.channelActive()
        _ = invitee.frameReceived(helloFromBob)
        let invite = Frame.Invite(
            timeoutMilliseconds: 5_000,
            fields: HandshakeFields(maximumMessageLength: 70_000),
            context: invitationContext
        )
        _ = invitee.frameReceived(.invite(invite))
        #expect(invitee.peerFields == nil)
        let accepted = invitee.accept(
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            maximumMessageLength: 9_000_000
        )
        let accept = Frame.accept(HandshakeFields(acceptingMessagesUpTo: 9_000_000))
        #expect(accepted == .establish(F.bob, sending: accept, finishingHandshake: false))
        #expect(invitee.peerFields?.maximumMessageLength == 70_000)
        #expect(invitee.peerFields?.readsFolders == false, "the INVITE did not say it reads folders")

        var inviter = makeInviter()
        _ = inviter.channelActive()
        _ = inviter.frameReceived(helloFromBob)
        _ = inviter.frameReceived(accept)
        #expect(inviter.peerFields?.maximumMessageLength == 9_000_000)
        #expect(inviter.peerFields?.readsFolders == true, "the ACCEPT said it reads folders")
    }
}
