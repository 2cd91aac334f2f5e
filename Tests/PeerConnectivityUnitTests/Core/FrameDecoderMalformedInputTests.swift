import NIOCore
import NIOEmbedded
import PeerConnectivityCore
import PeerConnectivityFuzz
import Testing

/// `FrameParser` and `FrameDecoder` on malformed, oversize, truncated and random input.
@Suite("Frame decoder: malformed input")
struct FrameDecoderMalformedInputTests {
    private typealias F = Fixtures

    private static func decoderChannel(limit: Int = F.sessionLimit) -> EmbeddedChannel {
        EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(maximumFrameLength: limit)))
    }

    // MARK: - Length prefix

    @Test("length 0 is rejected as soon as the prefix arrives")
    func emptyFrame() {
        #expect(throws: ProtocolError.emptyFrame) { try F.parse([0, 0, 0, 0]) }
        #expect(throws: ProtocolError.emptyFrame) { try F.parse([0, 0, 0, 0, 0x10, 0x10]) }
        let channel = Self.decoderChannel()
        #expect(throws: ProtocolError.emptyFrame) { try channel.writeInbound(F.buffer([0, 0, 0, 0])) }
    }

    @Test("fewer than four bytes wait for more")
    func partialPrefix() throws {
        #expect(try F.parse([]) == nil)
        #expect(try F.parse([0]) == nil)
        #expect(try F.parse([0xFF, 0xFF, 0xFF]) == nil)
    }

    @Test(
        "a length over the limit is rejected from the four length bytes alone",
        arguments: [
            (UInt32(101), 100),
            (UInt32(1 << 20), 100),
            (UInt32.max, 100),
            (UInt32.max, F.sessionLimit),
            (UInt32(F.sessionLimit + 1), F.sessionLimit),
            (UInt32(FrameLengthLimit.handshake + 1), FrameLengthLimit.handshake),
        ]
    )
    func frameTooLong(length: UInt32, limit: Int) {
        let expected = ProtocolError.frameTooLong(length: Int(length), limit: limit)
        let prefix = withUnsafeBytes(of: length.bigEndian, Array.init)
        #expect(throws: expected) { try F.parse(prefix, limit: limit) }
        // The same with the type byte and a little of the body: still the length error.
        #expect(throws: expected) { try F.parse(prefix + [0x10, 1, 2, 3], limit: limit) }
    }

    @Test("the decoder throws for an oversize length with only the 4 prefix bytes fed, buffering nothing")
    func oversizeRejectedBeforeBody() throws {
        let channel = Self.decoderChannel(limit: 1024)
        // Three bytes: not enough to know the length, nothing happens.
        try channel.writeInbound(F.buffer([0x7F, 0xFF, 0xFF]))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        // The fourth byte completes a 2 GiB length: the decoder throws at once, without waiting for a body.
        #expect(throws: ProtocolError.frameTooLong(length: 0x7FFF_FFFF, limit: 1024)) {
            try channel.writeInbound(F.buffer([0xFF]))
        }
        #expect(try channel.readInbound(as: Frame.self) == nil)
        _ = try? channel.finish()
    }

    @Test("the parser consumes nothing when it rejects a length")
    func rejectionConsumesNothing() {
        var buffer = F.buffer([0, 0, 0x10, 0, 0x10])
        #expect(throws: ProtocolError.frameTooLong(length: 4096, limit: 100)) {
            try FrameParser.parse(&buffer, maximumFrameLength: 100)
        }
        #expect(buffer.readerIndex == 0)
    }

    // MARK: - Type byte

    @Test("every unknown type byte is rejected with that byte")
    func unknownTypes() {
        let known = Set(FrameType.allCases.map(\.rawValue))
        for type in UInt8.min...UInt8.max where !known.contains(type) {
            #expect(throws: ProtocolError.unknownFrameType(type)) { try F.parse(F.rawFrame(type: type)) }
            #expect(throws: ProtocolError.unknownFrameType(type)) {
                try F.parse(F.rawFrame(type: type, payload: [1, 2, 3]))
            }
        }
        #expect(known.count == 25)
    }

    // MARK: - Bodies of fixed size

    @Test("KEEPALIVE must have an empty body", arguments: [FrameType.keepalive])
    func emptyBodyTypes(type: FrameType) {
        #expect(throws: ProtocolError.malformed(type, "body must be empty, got 1 bytes")) {
            try F.parse(F.rawFrame(type: type.rawValue, payload: [0]))
        }
        #expect(throws: ProtocolError.malformed(type, "body must be empty, got 300 bytes")) {
            try F.parse(F.rawFrame(type: type.rawValue, payload: Array(repeating: 7, count: 300)))
        }
    }

    @Test("DECLINE and GOODBYE must have exactly one reason byte", arguments: [FrameType.decline, .goodbye])
    func reasonByteTypes(type: FrameType) {
        for count in [0, 2, 3, 100] {
            #expect(throws: ProtocolError.malformed(type, "body must be one reason byte, got \(count) bytes")) {
                try F.parse(F.rawFrame(type: type.rawValue, payload: Array(repeating: 1, count: count)))
            }
        }
    }

    @Test("an unknown reason byte reads as peerDisconnected", arguments: [UInt8(0), 28, 99, 255])
    func unknownReason(byte: UInt8) throws {
        #expect(try F.parse(F.rawFrame(type: 0x12, payload: [byte])) == .goodbye(.peerDisconnected))
        #expect(try F.parse(F.rawFrame(type: 0x04, payload: [byte])) == .decline(.peerDisconnected))
    }

    // MARK: - INVITE

    @Test("an INVITE shorter than its 4-byte timeout is rejected", arguments: 0...3)
    func inviteTooShort(count: Int) {
        #expect(throws: ProtocolError.malformed(.invite, "missing the 4-byte timeout")) {
            try F.parse(F.rawFrame(type: 0x02, payload: Array(repeating: 0xAB, count: count)))
        }
    }

    @Test("an INVITE context over 64 KiB is rejected, even when the length limit would allow it")
    func inviteContextTooLong() throws {
        let context = [UInt8](repeating: 0x5A, count: WireProtocol.maximumContextLength + 1)
        let fields = F.messageLengthField()
        let bytes = F.rawFrame(type: 0x02, payload: [0, 0, 0, 1] + fields + context)
        #expect(throws: ProtocolError.malformed(.invite, "context of 65537 bytes exceeds 65536")) {
            try F.parse(bytes, limit: F.sessionLimit)
        }
        // Under the handshake limit the same frame with the most fields is rejected for its length first.
        let unknown: [UInt8] = [9, 0x03, 0xF5] + Array(repeating: 0, count: 1013)
        let padded = F.rawFrame(type: 0x02, payload: [0, 0, 0, 1] + [2] + fields.dropFirst() + unknown + context)
        let length = 1 + 4 + HandshakeFields.maximumEncodedLength + context.count
        #expect(throws: ProtocolError.frameTooLong(length: length, limit: FrameLengthLimit.handshake)) {
            try F.parse(padded, limit: FrameLengthLimit.handshake)
        }
        // Exactly 64 KiB is fine.
        let largest = F.rawFrame(type: 0x02, payload: [0, 0, 0, 1] + fields + context.dropLast())
        guard case .invite(let invite) = try F.parse(largest, limit: FrameLengthLimit.handshake) else {
            Issue.record("expected INVITE")
            return
        }
        #expect(invite.context.readableBytes == WireProtocol.maximumContextLength)
        #expect(invite.timeoutMilliseconds == 1)
    }

    // MARK: - HELLO

    @Test(
        "a HELLO that does not start with PCON is rejected",
        arguments: [[], [0x50], [0x50, 0x43, 0x4F], Array("PCOX".utf8), Array("pcon".utf8), [0, 0, 0, 0]]
    )
    func badMagic(magic: [UInt8]) {
        #expect(throws: ProtocolError.badMagic) { try F.parse(F.rawFrame(type: 0x01, payload: magic)) }
        #expect(throws: ProtocolError.badMagic) {
            try F.parse(F.rawFrame(type: 0x01, payload: F.helloPayload(magic: Array(magic.prefix(4)) + [0])))
        }
    }

    @Test(
        "a HELLO with another protocol version is incompatibleVersion",
        arguments: [UInt16(0), 1, 2, 3, 4, 6, 0x0100, .max]
    )
    func wrongVersion(version: UInt16) {
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(version: version))
        #expect(throws: ProtocolError.incompatibleVersion(version)) { try F.parse(bytes) }
        #expect(ProtocolError.incompatibleVersion(version).disconnectReason == .incompatibleVersion)
    }

    @Test("a HELLO cut short is malformed")
    func truncatedHello() {
        let whole = F.helloPayload()
        // Magic and one byte of the version.
        #expect(throws: ProtocolError.malformed(.hello, "missing the version")) {
            try F.parse(F.rawFrame(type: 0x01, payload: Array(whole[..<5])))
        }
        #expect(throws: ProtocolError.malformed(.hello, "missing the version")) {
            try F.parse(F.rawFrame(type: 0x01, payload: Array(whole[..<4])))
        }
        // Anywhere from just after the version to just before the name length byte.
        for cut in 6...22 {
            #expect(throws: ProtocolError.malformed(.hello, "truncated before the display name"), "cut at \(cut)") {
                try F.parse(F.rawFrame(type: 0x01, payload: Array(whole[..<cut])))
            }
        }
    }

    @Test(
        "a HELLO whose name length does not match the bytes that follow is malformed",
        arguments: [(UInt8(4), 3), (2, 3), (0, 3), (255, 3), (3, 0), (1, 2)]
    )
    func nameLengthMismatch(declared: UInt8, actual: Int) {
        let name = [UInt8](repeating: 0x61, count: actual)
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(nameLength: declared, name: name))
        // A name length past the bytes is caught there; a shorter one reads a name byte as the preference.
        let words =
            declared > actual
            ? "name length \(declared) but \(actual + 2) bytes follow (name, encryption byte, fields)"
            : "unknown encryption preference 97"
        #expect(throws: ProtocolError.malformed(.hello, words)) {
            try F.parse(bytes)
        }
    }

    @Test(
        "a HELLO whose name is not valid UTF-8 is malformed",
        arguments: [
            [0xFF],  // never valid
            [0xC0, 0x80],  // overlong NUL
            [0x61, 0x80],  // lone continuation byte
            [0xED, 0xA0, 0x80],  // UTF-16 surrogate
            [0xE2, 0x98],  // truncated 3-byte sequence
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0x61, 0x62, 0xC3],  // truncated at the end
        ] as [[UInt8]]
    )
    func invalidUTF8Name(name: [UInt8]) {
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(name: name))
        #expect(throws: ProtocolError.malformed(.hello, "display name is not valid UTF-8")) { try F.parse(bytes) }
    }

    @Test(
        "a HELLO whose name is a 3-byte prefix of a 4-byte sequence is malformed",
        arguments: [[0xF0, 0x9F, 0x98], [0x61, 0xF0, 0x9F, 0x98], [0xF4, 0x8F, 0xBF]] as [[UInt8]]
    )
    func invalidUTF8NameSameLengthAfterRepair(name: [UInt8]) {
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(name: name))
        #expect(throws: ProtocolError.malformed(.hello, "display name is not valid UTF-8")) { try F.parse(bytes) }
    }

    @Test("a HELLO whose name breaks the PeerID rules is malformed with the PeerIDError's words")
    func invalidPeerName() {
        let cases: [([UInt8], PeerIDError)] = [
            ([], .emptyDisplayName),
            ([0], .displayNameContainsNUL),
            ([0x61, 0, 0x62], .displayNameContainsNUL),
            (Array(repeating: 0x61, count: 64), .displayNameTooLong(64)),
            (Array(repeating: 0x61, count: 255), .displayNameTooLong(255)),
        ]
        for (name, error) in cases {
            let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(name: name))
            #expect(throws: ProtocolError.malformed(.hello, error.description)) { try F.parse(bytes) }
        }
    }

    @Test("a HELLO with trailing bytes after the name is malformed")
    func helloTrailingBytes() {
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload() + [0])
        #expect(throws: ProtocolError.malformed(.hello, "1 bytes after the fields")) { try F.parse(bytes) }
        // Without its field count, a HELLO is short.
        let bare = F.rawFrame(type: 0x01, payload: F.helloPayload(fields: []))
        let words = "name length 3 but 4 bytes follow (name, encryption byte, fields)"
        #expect(throws: ProtocolError.malformed(.hello, words)) { try F.parse(bare) }
    }

    @Test("protocol errors close with protocolViolation, and describe themselves")
    func disconnectReasons() {
        let errors: [ProtocolError] = [
            .emptyFrame, .badMagic, .unknownFrameType(0x7F), .frameTooLong(length: 9, limit: 8),
            .malformed(.hello, "x"), .unexpectedFrame(.data, state: "waiting for HELLO"),
            .truncatedFrame(bytesLeft: 3),
        ]
        for error in errors {
            #expect(error.disconnectReason == .protocolViolation)
            #expect(error.disconnectReason.detail == error.description)
        }
        #expect(ProtocolError.unknownFrameType(0x7F).description == "unknown frame type 0x7f")
        #expect(ProtocolError.frameTooLong(length: 9, limit: 8).description.contains("9"))
        #expect(ProtocolError.malformed(.hello, "x") != ProtocolError.malformed(.hello, "y"))
        #expect(ProtocolError.malformed(.hello, "x") != ProtocolError.malformed(.invite, "x"))
    }

    // MARK: - End of stream

    @Test(
        "EOF in the middle of a frame throws truncatedFrame with the bytes received",
        arguments: [
            [0],
            [0, 0, 0],
            [0, 0, 0, 5],
            [0, 0, 0, 5, 0x10, 1, 2],
            Array(F.rawFrame(type: 0x01, payload: F.helloPayload()).dropLast()),
        ] as [[UInt8]]
    )
    func eofMidFrame(bytes: [UInt8]) throws {
        let channel = Self.decoderChannel()
        try channel.writeInbound(F.buffer(bytes))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: bytes.count)) { try channel.finish() }
    }

    @Test("EOF after whole frames and part of another: the whole ones come out first")
    func eofAfterWholeFrames() throws {
        let channel = Self.decoderChannel()
        var input = FrameEncoder.buffer(for: .keepalive)
        FrameEncoder.encode(.data(F.buffer("abc")), into: &input)
        input.writeBytes([0, 0, 0, 9, 0x10])
        try channel.writeInbound(input)
        #expect(try channel.readInbound(as: Frame.self) == .keepalive)
        #expect(try channel.readInbound(as: Frame.self) == .data(F.buffer("abc")))
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: 5)) { try channel.finish() }
    }

    @Test("closing the channel mid-frame reports truncatedFrame through the pipeline")
    func closeMidFrame() throws {
        let channel = Self.decoderChannel()
        try channel.writeInbound(F.buffer([0, 0, 0, 3, 0x10]))
        try channel.close().wait()
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: 5)) { try channel.throwIfErrorCaught() }
    }

    @Test("EOF between frames is clean")
    func eofBetweenFrames() throws {
        let channel = Self.decoderChannel()
        try channel.writeInbound(FrameEncoder.buffer(for: .accept(.defaultLimits)))
        #expect(try channel.readInbound(as: Frame.self) == .accept(.defaultLimits))
        #expect(try channel.finish().isClean)
    }

    // MARK: - Regression cases

    @Test("regression: UInt32.max length with a 64-bit limit is not added up into an overflow")
    func regressionMaxLength() throws {
        #expect(throws: ProtocolError.frameTooLong(length: Int(UInt32.max), limit: Int(UInt32.max) - 1)) {
            try F.parse([0xFF, 0xFF, 0xFF, 0xFF], limit: Int(UInt32.max) - 1)
        }
        // With a limit above every length, a huge prefix just waits for its body.
        #expect(try F.parse([0xFF, 0xFF, 0xFF, 0xFF, 0x10], limit: .max) == nil)
    }

    @Test("regression: a HELLO with name length 255 and no name bytes")
    func regressionHelloLongNameNoBytes() {
        let bytes = F.rawFrame(type: 0x01, payload: F.helloPayload(nameLength: 255, name: []))
        let words = "name length 255 but 2 bytes follow (name, encryption byte, fields)"
        #expect(throws: ProtocolError.malformed(.hello, words)) { try F.parse(bytes) }
    }

    @Test("regression: a HELLO that is only its type byte")
    func regressionBareHello() {
        #expect(throws: ProtocolError.badMagic) { try F.parse([0, 0, 0, 1, 0x01]) }
    }

    @Test("regression: a length prefix that swallows the next frame's header")
    func regressionOverlappingLength() throws {
        // A DATA frame claiming 6 bytes, followed by a KEEPALIVE: the KEEPALIVE becomes its payload.
        let bytes: [UInt8] = [0, 0, 0, 6, 0x10, 0, 0, 0, 1, 0x11]
        #expect(try F.parse(bytes) == .data(F.buffer([0, 0, 0, 1, 0x11])))
    }

    // MARK: - Random input

    @Test("5,000 seeded random buffers never crash the parser")
    func randomGarbage() {
        var random = SplitMix64(seed: 0x5EED_0F_C0FFEE)
        var outcomes = (needMore: 0, frames: 0, errors: 0)
        let limit = 4096
        for _ in 0..<5000 {
            var buffer = ByteBuffer(bytes: Self.randomInput(using: &random))
            loop: while true {
                let before = buffer.readableBytes
                do {
                    guard let frame = try FrameParser.parse(&buffer, maximumFrameLength: limit) else {
                        outcomes.needMore += 1
                        break loop
                    }
                    outcomes.frames += 1
                    // A frame consumed its bytes, and encodes back to them, less any handshake field of a type
                    // this version skips (a flipped type byte makes one); the encoding reads back as the frame.
                    let consumed = before - buffer.readableBytes
                    var encoded = FrameEncoder.buffer(for: frame)
                    #expect(encoded.readableBytes <= consumed, "\(frame)")
                    #expect((try? FrameParser.parse(&encoded, maximumFrameLength: limit)) == frame, "\(frame)")
                } catch {
                    // The thrown type is ProtocolError by the parser's signature; check it has words.
                    #expect(!error.description.isEmpty)
                    outcomes.errors += 1
                    break loop
                }
            }
        }
        // The generator reaches every outcome, so the loop tested something.
        #expect(outcomes.needMore > 100)
        #expect(outcomes.frames > 100)
        #expect(outcomes.errors > 100)
    }

    @Test("seeded random input through FrameDecoder never crashes the pipeline")
    func randomGarbageThroughDecoder() throws {
        var random = SplitMix64(seed: 42)
        for _ in 0..<300 {
            let channel = Self.decoderChannel(limit: 4096)
            let bytes = Self.randomInput(using: &random)
            var offset = 0
            do {
                while offset < bytes.count {
                    let chunk = Int.random(in: 1...8, using: &random)
                    try channel.writeInbound(F.buffer(Array(bytes[offset..<min(bytes.count, offset + chunk)])))
                    offset += chunk
                    while try channel.readInbound(as: Frame.self) != nil {}
                }
                _ = try channel.finish()
            } catch is ProtocolError {
                _ = try? channel.finish()
            }
        }
    }

    /// Random bytes, often shaped like frames so that the body parsers are reached.
    private static func randomInput(using random: inout SplitMix64) -> [UInt8] {
        switch random.next() % 4 {
        case 0:
            // Pure noise.
            return (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 1:
            // A plausible header (small length, a known or unknown type) and a random body.
            let body = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let type = random.next() % 2 == 0 ? FrameType.allCases.randomElement(using: &random)!.rawValue : 0x13
            let length = UInt32(truncatingIfNeeded: body.count + 1 + Int.random(in: -1...1, using: &random))
            return F.rawFrame(length: length, type: type, payload: body)
        default:
            // A few valid frames, then some bytes flipped, cut or added.
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let frame = F.oneOfEachType.randomElement(using: &random)!
                bytes += Array(FrameEncoder.buffer(for: frame).readableBytesView)
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) where !bytes.isEmpty {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch random.next() % 3 {
                case 0: bytes[index] ^= UInt8(1) << (random.next() % 8)
                case 1: bytes.removeSubrange(index...)
                default: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
                }
            }
            return bytes
        }
    }
}
