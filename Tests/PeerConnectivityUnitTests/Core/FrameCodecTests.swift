import Foundation
import NIOCore
import NIOEmbedded
import NIOTestUtils
import PeerConnectivityCore
import PeerConnectivityFuzz
import PeerConnectivityTesting
import Testing

/// `FrameEncoder`, `FrameParser` and `FrameDecoder` on well-formed input.
@Suite("Frame codec")
struct FrameCodecTests {
    private static let roundTripFrames: [Frame] =
        Fixtures.oneOfEachType + [
            .hello(Frame.Hello(peer: try! PeerID(displayName: String(repeating: "é", count: 31) + "a"))),
            .hello(Frame.Hello(peer: try! PeerID(displayName: "x"))),
            .invite(Frame.Invite(timeoutMilliseconds: 0, fields: .defaultLimits, context: ByteBuffer())),
            .invite(
                Frame.Invite(timeoutMilliseconds: .max, fields: .defaultLimits, context: Fixtures.pattern(count: 1000))
            ),
            .invite(
                Frame.Invite(
                    timeoutMilliseconds: 1,
                    fields: .defaultLimits,
                    context: Fixtures.pattern(count: WireProtocol.maximumContextLength)
                )
            ),
            .data(ByteBuffer()),
            .data(Fixtures.pattern(count: 1)),
            .data(Fixtures.pattern(count: WireProtocol.inlineMessageLimit)),
            .decline(.busy),
            .decline(.sessionFull),
            .decline(.timedOut),
            .goodbye(.livenessTimeout),
            .goodbye(.protocolViolation),
        ]

    @Test("every frame round-trips through the encoder and the parser", arguments: roundTripFrames)
    func roundTrip(frame: Frame) throws {
        var buffer = ByteBuffer()
        FrameEncoder.encode(frame, into: &buffer)
        let encodedLength = buffer.readableBytes
        let parsed = try FrameParser.parse(&buffer, maximumFrameLength: Fixtures.sessionLimit)
        #expect(parsed == frame)
        #expect(parsed?.type == frame.type)
        #expect(buffer.readableBytes == 0)
        // The length prefix counts the type byte and the payload.
        #expect(FrameEncoder.buffer(for: frame).getInteger(at: 0, as: UInt32.self) == UInt32(encodedLength - 4))
        // PeerID equality ignores the name, so check it and the version explicitly.
        if case .hello(let sent) = frame, case .hello(let received) = parsed {
            #expect(received.peer.displayName == sent.peer.displayName)
            #expect(received.version == sent.version)
        }
    }

    @Test("every frame type is covered and the type byte matches")
    func everyTypeCovered() {
        #expect(Set(Fixtures.oneOfEachType.map(\.type)) == Set(FrameType.allCases))
        for frame in Fixtures.oneOfEachType {
            #expect(FrameEncoder.buffer(for: frame).getInteger(at: 4, as: UInt8.self) == frame.type.rawValue)
        }
    }

    @Test("type bytes and names are as documented")
    func typeBytes() {
        let expected: [FrameType: (UInt8, String)] = [
            .hello: (0x01, "HELLO"), .invite: (0x02, "INVITE"), .accept: (0x03, "ACCEPT"),
            .decline: (0x04, "DECLINE"), .pairCommit: (0x05, "PAIR-COMMIT"), .pairNonce: (0x06, "PAIR-NONCE"),
            .datagramKey: (0x07, "DATAGRAM-KEY"), .data: (0x10, "DATA"), .keepalive: (0x11, "KEEPALIVE"),
            .goodbye: (0x12, "GOODBYE"), .datagramEndpoint: (0x13, "DATAGRAM-ENDPOINT"),
            .sessionListener: (0x14, "SESSION-LISTENER"), .members: (0x15, "MEMBERS"), .open: (0x20, "OPEN"),
            .chunk: (0x21, "CHUNK"), .end: (0x22, "END"),
            .reset: (0x23, "RESET"), .credit: (0x24, "CREDIT"), .done: (0x25, "DONE"),
            .resumeSecret: (0x16, "RESUME-SECRET"), .resume: (0x17, "RESUME"), .resumed: (0x18, "RESUMED"),
            .ack: (0x19, "ACK"), .block: (0x26, "BLOCK"), .have: (0x27, "HAVE"),
        ]
        for type in FrameType.allCases {
            #expect(type.rawValue == expected[type]?.0)
            #expect(type.description == expected[type]?.1)
        }
    }

    @Test("the wire format, byte by byte")
    func wireBytes() {
        func bytes(_ frame: Frame) -> [UInt8] {
            Array(FrameEncoder.buffer(for: frame).readableBytesView)
        }
        // ACCEPT: four fields, the largest message (type 1, length 4, 16 MiB), reads folders (type 2, length 0),
        // probes datagrams (type 3, length 0) and hashes blocks with XXH3-64 (type 4, length 0).
        #expect(
            bytes(.accept(.defaultLimits)) == [0, 0, 0, 18, 0x03, 4, 1, 0, 4, 1, 0, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0]
        )
        #expect(
            bytes(.accept(HandshakeFields(maximumMessageLength: 1 << 24))) == [
                0, 0, 0, 9, 0x03, 1, 1, 0, 4, 1, 0, 0, 0,
            ]
        )
        #expect(bytes(.accept(HandshakeFields())) == [0, 0, 0, 2, 0x03, 0])
        #expect(bytes(.keepalive) == [0, 0, 0, 1, 0x11])
        #expect(bytes(.decline(.declined)) == [0, 0, 0, 2, 0x04, 3])
        #expect(bytes(.goodbye(.localDisconnect)) == [0, 0, 0, 2, 0x12, 1])
        #expect(bytes(.data(Fixtures.buffer([0xAA, 0xBB]))) == [0, 0, 0, 3, 0x10, 0xAA, 0xBB])
        #expect(bytes(.data(ByteBuffer())) == [0, 0, 0, 1, 0x10])
        #expect(
            bytes(
                .invite(
                    Frame.Invite(
                        timeoutMilliseconds: 0x0102_0304,
                        fields: .defaultLimits,
                        context: Fixtures.buffer([9])
                    )
                )
            )
                == [0, 0, 0, 23, 0x02, 1, 2, 3, 4, 4, 1, 0, 4, 1, 0, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 9]
        )
        let hello = bytes(.hello(Frame.Hello(peer: Fixtures.bob)))
        let helloPayload = Fixtures.helloPayload()
        #expect(hello == Fixtures.rawFrame(type: 0x01, payload: helloPayload))
        #expect(hello.count == 5 + 4 + 2 + 16 + 1 + 3 + 1 + 1)
        #expect(Array(hello[5..<9]) == Array("PCON".utf8))
        #expect(Array(hello[9..<11]) == [0, 5])
        #expect(Array(hello.suffix(2)) == [0, 0])  // encryption preference none, no fields
        let optional = bytes(.hello(Frame.Hello(peer: Fixtures.bob, encryption: .optional)))
        #expect(optional.dropLast().last == 1)
        #expect(bytes(.hello(Frame.Hello(peer: Fixtures.bob, encryption: .required))).dropLast().last == 2)
        // The example in PROTOCOL.md: HELLO from "alice", optional.
        let alice = try! PeerID(id: UUID(uuidString: "3c5f1e4d-682a-4ab0-8e6c-8beeffa5c964")!, displayName: "alice")
        #expect(
            bytes(.hello(Frame.Hello(peer: alice, encryption: .optional)))
                == [0, 0, 0, 0x1F, 0x01, 0x50, 0x43, 0x4F, 0x4E, 0, 5]
                + [0x3C, 0x5F, 0x1E, 0x4D, 0x68, 0x2A, 0x4A, 0xB0, 0x8E, 0x6C, 0x8B, 0xEE, 0xFF, 0xA5, 0xC9, 0x64]
                + [5, 0x61, 0x6C, 0x69, 0x63, 0x65, 0x01, 0x00]
        )
        #expect(throws: ProtocolError.malformed(.hello, "unknown encryption preference 3")) {
            try Fixtures.parse(Fixtures.rawFrame(type: 0x01, payload: Fixtures.helloPayload(encryption: [3])))
        }
    }

    @Test(
        "dataFrame(_:) writes the same bytes as encoding a DATA frame, in chunks of at most chunkLength",
        arguments: [
            0, 777, FrameEncoder.chunkLength - 5, FrameEncoder.chunkLength - 4, FrameEncoder.chunkLength * 3 + 1,
            1 << 20,
        ]
    )
    func dataFrameHelper(size: Int) {
        let payload = Array(Fixtures.pattern(count: size).readableBytesView)
        let encoded = payload.withUnsafeBytes { FrameEncoder.dataFrame($0) }
        var joined = encoded.head
        for chunk in encoded.rest {
            #expect(chunk.readableBytes <= FrameEncoder.chunkLength)
            joined.writeImmutableBuffer(chunk)
        }
        #expect(encoded.head.readableBytes <= FrameEncoder.chunkLength)
        #expect(encoded.byteCount == 5 + size)
        #expect(joined == FrameEncoder.buffer(for: .data(ByteBuffer(bytes: payload))))
    }

    @Test("encode appends after what the buffer already holds")
    func encodeAppends() throws {
        var buffer = Fixtures.buffer([0xFF, 0xFF])
        buffer.moveReaderIndex(forwardBy: 2)
        FrameEncoder.encode(.keepalive, into: &buffer)
        FrameEncoder.encode(.accept(.defaultLimits), into: &buffer)
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: 32) == .keepalive)
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: 32) == .accept(.defaultLimits))
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: 32) == nil)
    }

    @Test("an incomplete frame parses to nil and consumes nothing, for every prefix", arguments: Fixtures.oneOfEachType)
    func everyPrefixNeedsMoreData(frame: Frame) throws {
        let whole = Array(FrameEncoder.buffer(for: frame).readableBytesView)
        for cut in 0..<whole.count {
            var buffer = ByteBuffer(bytes: whole[..<cut])
            #expect(try FrameParser.parse(&buffer, maximumFrameLength: Fixtures.sessionLimit) == nil)
            #expect(buffer.readerIndex == 0 && buffer.readableBytes == cut)
        }
    }

    @Test("a frame exactly at the limit is accepted, one byte more is not")
    func limitIsInclusive() throws {
        let limit = 100
        let atLimit = FrameEncoder.buffer(for: .data(Fixtures.pattern(count: limit - 1)))
        var buffer = atLimit
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: limit) == .data(Fixtures.pattern(count: limit - 1)))
        var over = FrameEncoder.buffer(for: .data(Fixtures.pattern(count: limit)))
        #expect(throws: ProtocolError.frameTooLong(length: limit + 1, limit: limit)) {
            try FrameParser.parse(&over, maximumFrameLength: limit)
        }
    }

    @Test("the handshake limit admits the largest INVITE and any HELLO")
    func handshakeLimit() throws {
        let largestInvite = 1 + 4 + HandshakeFields.maximumEncodedLength + WireProtocol.maximumContextLength
        #expect(FrameLengthLimit.handshake == largestInvite)
        let invite = Frame.invite(
            Frame.Invite(
                timeoutMilliseconds: 1,
                fields: .defaultLimits,
                context: Fixtures.pattern(count: WireProtocol.maximumContextLength)
            )
        )
        var buffer = FrameEncoder.buffer(for: invite)
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: FrameLengthLimit.handshake) == invite)
        let longestName = try PeerID(displayName: String(repeating: "n", count: PeerID.maximumDisplayNameLength))
        var hello = FrameEncoder.buffer(for: .hello(Frame.Hello(peer: longestName)))
        #expect(try FrameParser.parse(&hello, maximumFrameLength: FrameLengthLimit.handshake) != nil)
    }

    @Test("maximumFrameLength(forMessageLength:) covers a DATA frame and the largest INVITE")
    func maximumFrameLength() {
        #expect(WireProtocol.maximumFrameLength(forMessageLength: 1 << 20) == 1 + (1 << 20))
        #expect(
            WireProtocol.maximumFrameLength(forMessageLength: 10)
                == 1 + 4 + HandshakeFields.maximumEncodedLength + WireProtocol.maximumContextLength
        )
        #expect(WireProtocol.defaultMaximumMessageLength == 16 << 20)
        #expect(WireProtocol.headerLength == 5)
    }

    @Test("a DATA frame's payload is exactly its bytes, with no neighbours")
    func dataSlice() throws {
        var buffer = ByteBuffer()
        FrameEncoder.encode(.data(Fixtures.buffer("first")), into: &buffer)
        FrameEncoder.encode(.data(Fixtures.buffer("second")), into: &buffer)
        guard case .data(var first) = try FrameParser.parse(&buffer, maximumFrameLength: 64) else {
            Issue.record("expected DATA")
            return
        }
        #expect(first.readString(length: first.readableBytes) == "first")
        #expect(try FrameParser.parse(&buffer, maximumFrameLength: 64) == .data(Fixtures.buffer("second")))
    }

    // MARK: - FrameDecoder

    /// Runs the verifier on one frame of each type, an empty DATA frame, a DATA frame of `largeDataLength` bytes,
    /// an empty INVITE, one input carrying several frames.
    private static func verify(largeDataLength: Int, gatherThreshold: Int = FrameDecoder.defaultGatherThreshold) throws
    {
        let frames: [Frame] =
            Fixtures.oneOfEachType + [
                .data(ByteBuffer()),
                .data(Fixtures.pattern(count: largeDataLength)),
                .invite(Frame.Invite(timeoutMilliseconds: 5, fields: .defaultLimits, context: ByteBuffer())),
            ]
        var pairs = frames.map { (FrameEncoder.buffer(for: $0), [$0]) }
        var several = ByteBuffer()
        for frame in [Frame.keepalive, .data(ByteBuffer()), .accept(.defaultLimits)] {
            FrameEncoder.encode(frame, into: &several)
        }
        pairs.append((several, [.keepalive, .data(ByteBuffer()), .accept(.defaultLimits)]))
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) {
            var decoder = FrameDecoder(maximumFrameLength: Fixtures.sessionLimit)
            decoder.gatherThreshold = gatherThreshold
            return decoder
        }
    }

    @Test("ByteToMessageDecoderVerifier: byte by byte and many frames per buffer, with empty and 8 KiB DATA")
    func verifier() throws {
        try Self.verify(largeDataLength: 8 * 1024)
    }

    @Test("the same, with bodies of 1 KiB and more gathered into their own buffers as they arrive")
    func verifierGathering() throws {
        try Self.verify(largeDataLength: 8 * 1024, gatherThreshold: 1024)
    }

    @Test("large bodies gathered one after another: a message still held keeps its bytes, one let go is reused")
    func gatheredBodiesStayIntact() throws {
        let payloads = (0..<4).map { Fixtures.pattern(count: (300 << 10) + $0 * 1000, seed: UInt8($0 + 1)) }
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(maximumFrameLength: Fixtures.sessionLimit))
        )
        var held: [Frame] = []
        for (index, payload) in payloads.enumerated() {
            var encoded = FrameEncoder.buffer(for: .data(payload))
            while encoded.readableBytes > 0 {  // in reads of 64 KiB, as from a socket
                try channel.writeInbound(encoded.readSlice(length: min(64 << 10, encoded.readableBytes))!)
            }
            let frame = try #require(try channel.readInbound(as: Frame.self))
            #expect(frame == .data(payload))
            if index % 2 == 0 { held.append(frame) }  // the others are let go at once
        }
        #expect(held == [.data(payloads[0]), .data(payloads[2])])
        #expect(try channel.finish().isClean)
    }

    @Test("a gathered body cut short by EOF is a truncated frame; one of an unknown type is refused whole")
    func gatheredBodyErrors() throws {
        var decoder = FrameDecoder(maximumFrameLength: Fixtures.sessionLimit)
        decoder.gatherThreshold = 1024
        var encoded = FrameEncoder.buffer(for: .data(Fixtures.pattern(count: 4096)))
        var firstPart = encoded.readSlice(length: 2000)!
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(decoder))
        try channel.writeInbound(firstPart)
        #expect(try channel.readInbound(as: Frame.self) == nil)
        #expect(throws: ProtocolError.truncatedFrame(bytesLeft: 2000)) { try channel.finish() }

        var unknown = ByteBuffer()
        unknown.writeInteger(UInt32(4097))
        unknown.writeInteger(UInt8(0x7F))
        unknown.writeRepeatingByte(0, count: 4096)
        firstPart = unknown.readSlice(length: 3000)!
        let second = EmbeddedChannel(handler: ByteToMessageHandler(decoder))
        try second.writeInbound(firstPart)
        #expect(throws: ProtocolError.unknownFrameType(0x7F)) { try second.writeInbound(unknown) }
    }

    /// The verifier drip-feeds every input byte by byte ten times over: with a 1 MiB frame that is about
    /// 10.5 million channel writes, some 8 minutes in a debug build, so it runs only when asked for.
    @Test(
        "ByteToMessageDecoderVerifier with a 1 MiB DATA frame (slow; set PEERCONNECTIVITY_SLOW_TESTS=1)",
        .enabled(if: ProcessInfo.processInfo.environment["PEERCONNECTIVITY_SLOW_TESTS"] != nil)
    )
    func verifierOneMiB() throws {
        try Self.verify(largeDataLength: WireProtocol.inlineMessageLimit)
    }

    @Test("a 1 MiB DATA frame between small ones decodes fed whole, in random chunks, and split around its header")
    func oneMiBFrame() throws {
        let big = Frame.data(Fixtures.pattern(count: WireProtocol.inlineMessageLimit))
        let frames: [Frame] = [.keepalive, big, .data(ByteBuffer()), big, .accept(.defaultLimits)]
        var stream = ByteBuffer()
        for frame in frames { FrameEncoder.encode(frame, into: &stream) }
        let bytes = Array(stream.readableBytesView)
        let bigStart = 5  // after the KEEPALIVE

        var random = SplitMix64(seed: 0x1_0000)
        let randomCuts = (0..<200).map { _ in Int.random(in: 1..<bytes.count, using: &random) }
        let headerCuts = Array(bigStart...(bigStart + 6)) + [bytes.count - 1]
        for cuts in [[], randomCuts, headerCuts] {
            let channel = EmbeddedChannel(
                handler: ByteToMessageHandler(FrameDecoder(maximumFrameLength: Fixtures.sessionLimit))
            )
            var received: [Frame] = []
            var start = 0
            for end in Set(cuts + [bytes.count]).sorted() {
                try channel.writeInbound(ByteBuffer(bytes: bytes[start..<end]))
                start = end
                while let frame = try channel.readInbound(as: Frame.self) { received.append(frame) }
            }
            #expect(received == frames, "\(cuts.count) cuts")
            #expect(try channel.finish().isClean)
        }
    }

    @Test("1,000 frames in one buffer come out in order")
    func thousandFramesInOneBuffer() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(maximumFrameLength: 4096)))
        var expected: [Frame] = []
        var input = ByteBuffer()
        for index in 0..<1000 {
            let frame: Frame
            switch index % 4 {
            case 0: frame = .data(Fixtures.buffer("message \(index)"))
            case 1: frame = .keepalive
            case 2: frame = .data(Fixtures.pattern(count: index))
            default: frame = .goodbye(DisconnectReason(wireValue: UInt8(index % 14)))
            }
            FrameEncoder.encode(frame, into: &input)
            expected.append(frame)
        }
        try channel.writeInbound(input)
        for (index, frame) in expected.enumerated() {
            let received = try channel.readInbound(as: Frame.self)
            #expect(received == frame, "frame \(index)")
        }
        #expect(try channel.readInbound(as: Frame.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test("a frame fed one byte at a time comes out once, after its last byte")
    func oneByteAtATime() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(maximumFrameLength: 4096)))
        for frame in Fixtures.oneOfEachType + [.data(Fixtures.pattern(count: 3000))] {
            let bytes = Array(FrameEncoder.buffer(for: frame).readableBytesView)
            for (index, byte) in bytes.enumerated() {
                try channel.writeInbound(Fixtures.buffer([byte]))
                let received = try channel.readInbound(as: Frame.self)
                if index == bytes.count - 1 {
                    #expect(received == frame)
                } else if received != nil {
                    Issue.record("\(frame.type) came out after \(index + 1) of \(bytes.count) bytes")
                }
            }
        }
        #expect(try channel.finish().isClean)
    }

    @Test("raising the shared FrameLengthLimit admits larger frames at once")
    func sharedLimit() throws {
        let limit = FrameLengthLimit(FrameLengthLimit.handshake)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(limit: limit)))
        try channel.writeInbound(FrameEncoder.buffer(for: .hello(Frame.Hello(peer: Fixtures.bob))))
        #expect(try channel.readInbound(as: Frame.self) == .hello(Frame.Hello(peer: Fixtures.bob)))
        limit.value = Fixtures.sessionLimit
        let big = Frame.data(Fixtures.pattern(count: WireProtocol.inlineMessageLimit))
        try channel.writeInbound(FrameEncoder.buffer(for: big))
        #expect(try channel.readInbound(as: Frame.self) == big)
        #expect(try channel.finish().isClean)
    }

    @Test("a lower limit applies to the next frame")
    func loweredLimit() throws {
        let limit = FrameLengthLimit(100)
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(FrameDecoder(limit: limit)))
        try channel.writeInbound(FrameEncoder.buffer(for: .data(Fixtures.pattern(count: 50))))
        #expect(try channel.readInbound(as: Frame.self) == .data(Fixtures.pattern(count: 50)))
        limit.value = 10
        #expect(throws: ProtocolError.frameTooLong(length: 51, limit: 10)) {
            try channel.writeInbound(FrameEncoder.buffer(for: .data(Fixtures.pattern(count: 50))))
        }
        _ = try? channel.finish()
    }
}

@Suite("Channel frame bodies")
struct ChannelFrameBodyTests {
    private typealias F = Fixtures

    private func parse(type: FrameType, payload: [UInt8]) throws(ProtocolError) -> Frame? {
        try F.parse(F.rawFrame(type: type.rawValue, payload: payload))
    }

    private func be32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    @Test("OPEN, CHUNK, END, RESET, CREDIT and DONE round-trip, byte for byte as in PROTOCOL.md")
    func layouts() throws {
        var buffer = ByteBuffer()
        FrameEncoder.encode(.credit(channel: 3, increment: 65_536), into: &buffer)
        #expect(Array(buffer.readableBytesView) == [0, 0, 0, 9, 0x24, 0, 0, 0, 3, 0, 1, 0, 0])
        buffer.clear()
        FrameEncoder.encode(
            .open(Frame.Open(channel: 1, kind: .resource, size: 5, name: Array("a.txt".utf8))),
            into: &buffer
        )
        #expect(
            Array(buffer.readableBytesView) == [0, 0, 0, 19, 0x20, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 5]
                + Array("a.txt".utf8)
        )
        let chunk = [UInt8](repeating: 9, count: 100)
        let encoded = chunk.withUnsafeBytes { FrameEncoder.chunkFrame(channel: 7, $0) }
        var copy = encoded
        #expect(
            try FrameParser.parse(&copy, maximumFrameLength: 1 << 20) == .chunk(channel: 7, ByteBuffer(bytes: chunk))
        )
    }

    @Test("malformed channel bodies are rejected with a reason")
    func malformed() {
        let cases: [(FrameType, [UInt8], String)] = [
            (.chunk, [0, 0, 0], "malformed CHUNK frame: missing the 4-byte channel number"),
            (.chunk, be32(0) + [1], "malformed CHUNK frame: channel 0 is not a channel"),
            (.chunk, be32(1), "malformed CHUNK frame: 0 bytes; a chunk carries 1-65536"),
            (.open, be32(1) + [1], "malformed OPEN frame: truncated before the name"),
            (.open, be32(1) + [9, 0, 0, 0, 0, 0, 0, 0, 0, 0x61], "malformed OPEN frame: unknown channel kind 9"),
            (.open, be32(1) + [1, 0, 0, 0, 0, 0, 0, 0, 1, 0x61], "malformed OPEN frame: a stream has no size"),
            (
                .open, be32(1) + [1, 0, 0, 0, 0, 0, 0, 0, 0],
                "malformed OPEN frame: name of 0 bytes; a stream's is 1-16384"
            ),
            (.end, be32(1) + [1, 2, 3], "malformed END frame: 3 bytes after the channel; expected 0 or 32"),
            (.reset, be32(1), "malformed RESET frame: expected one code byte after the channel"),
            (
                .credit, be32(1) + be32(0),
                "malformed CREDIT frame: expected a non-zero 4-byte increment after the channel"
            ),
            (.done, be32(1) + [0], "malformed DONE frame: body must be empty, got 1 bytes"),
        ]
        for (type, payload, message) in cases {
            #expect(throws: ProtocolError.self) { try parse(type: type, payload: payload) }
            do {
                _ = try parse(type: type, payload: payload)
            } catch {
                #expect(error.description == message)
            }
        }
        let longName = be32(1) + [1] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0x61, count: 16_385)
        #expect(throws: ProtocolError.malformed(.open, "name of 16385 bytes; a stream's is 1-16384")) {
            try parse(type: .open, payload: longName)
        }
    }

    @Test("an unknown RESET code reads as failed")
    func unknownResetCode() throws {
        #expect(try parse(type: .reset, payload: be32(4) + [200]) == .reset(channel: 4, .failed))
    }
}
