import NIOCore
import NIOEmbedded
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

/// `FrameDecoder` gathers large bodies into buffers it uses again once the application lets go of them.
@Suite("Frame decoder: gathered bodies and their spare buffers")
struct FrameDecoderSpareTests {
    /// Decodes `frames`, fed in reads of `readLength` bytes, with a fresh decoder; returns the frames.
    private static func decode(_ encoded: ByteBuffer, readLength: Int, decoder: inout FrameDecoder) throws -> [Frame] {
        var frames: [Frame] = []
        var input = encoded
        var cumulation = ByteBuffer()
        while input.readableBytes > 0 {
            var read = input.readSlice(length: min(readLength, input.readableBytes))!
            cumulation.writeBuffer(&read)
            while let frame = try decoder.nextFrame(&cumulation, allocator: ByteBufferAllocator()) {
                frames.append(frame)
            }
        }
        #expect(cumulation.readableBytes == 0)
        return frames
    }

    @Test("large and small frames arrive intact, whole or cut anywhere, with a low gathering threshold too")
    func chunksGathered() throws {
        let frames: [Frame] = [
            .chunk(channel: 3, Fixtures.pattern(count: WireProtocol.maximumChunkLength, seed: 1)),
            .keepalive,
            .chunk(channel: 5, Fixtures.pattern(count: 1000, seed: 2)),  // below the threshold
            .chunk(channel: 5, Fixtures.pattern(count: 4096, seed: 3)),
            .data(Fixtures.pattern(count: 300 << 10, seed: 4)),
            .chunk(channel: 3, Fixtures.pattern(count: 1, seed: 5)),
        ]
        var encoded = ByteBuffer()
        for frame in frames { FrameEncoder.encode(frame, into: &encoded) }
        for readLength in [7, 4096, 65_541, 1 << 20] {
            for threshold in [FrameDecoder.defaultGatherThreshold, 1024] {
                var decoder = FrameDecoder(maximumFrameLength: Fixtures.sessionLimit)
                decoder.gatherThreshold = threshold
                #expect(try Self.decode(encoded, readLength: readLength, decoder: &decoder) == frames)
            }
        }
    }

    @Test("a body let go is gathered into again; held ones are not overwritten; the spares stay within their limit")
    func sparesReusedAndBounded() throws {
        var decoder = FrameDecoder(maximumFrameLength: Fixtures.sessionLimit)
        let payloads = (0..<40).map { ByteBuffer(repeating: UInt8($0), count: 200_000) }
        var held: [(Frame, ByteBuffer)] = []
        for (index, payload) in payloads.enumerated() {
            let encoded = FrameEncoder.buffer(for: .data(payload))
            let frames = try Self.decode(encoded, readLength: 65_536, decoder: &decoder)
            #expect(frames == [.data(payload)])
            if index < 5 { held.append((frames[0], payload)) }  // the rest are let go at once
        }
        for (frame, payload) in held {
            #expect(frame == .data(payload))
        }
        // Five bodies held, one at a time let go: six buffers at most, not one per frame.
        #expect(decoder.spareCount <= 6)
        #expect(decoder.spareCount >= 1)

        // Held past the byte limit, frames still decode; only the limit's worth is kept.
        var hoard: [Frame] = []
        for index in 0..<60 {
            let encoded = FrameEncoder.buffer(for: .data(ByteBuffer(repeating: UInt8(index), count: 200_000)))
            hoard += try Self.decode(encoded, readLength: 1 << 20, decoder: &decoder)
        }
        #expect(hoard.count == 60)
        #expect(decoder.spareCount * (1 + 200_000) <= FrameDecoder.spareBytesLimit)
    }

    @Test("an application that keeps a few bodies at a time is served from the spares for good, not only at first")
    func sparesLastPastTheirByteLimit() throws {
        var decoder = FrameDecoder(maximumFrameLength: Fixtures.sessionLimit)
        var window: [Frame] = []
        // 200 bodies of 200 kB: five times the spares' byte limit, so that each byte of it is counted
        // in and out many times.
        for index in 0..<200 {
            let payload = ByteBuffer(repeating: UInt8(index % 251), count: 200_000)
            let frames = try Self.decode(
                FrameEncoder.buffer(for: .data(payload)),
                readLength: 65_536,
                decoder: &decoder
            )
            #expect(frames == [.data(payload)])
            window += frames
            if window.count > 6 { window.removeFirst() }
        }
        // Six held and one being let go: every one of them comes back as a spare. A count that drifts
        // (bytes counted in and never out) leaves one spare and a fresh buffer for each body.
        #expect(decoder.spareCount >= 6)
    }
}
