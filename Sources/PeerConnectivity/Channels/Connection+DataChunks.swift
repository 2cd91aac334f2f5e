import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

extension Connection {
    /// Writes `data` on `channel` as CHUNK frames of at most ``chunkPayloadLimit`` bytes,
    /// each copied into the connection's pooled send buffers, waiting for credit and room as
    /// ``sendChunk(_:payloadLength:on:)`` does (a stream's write, a large message).
    ///
    /// - Throws: what ``sendChunk(_:payloadLength:on:)`` throws, or `CancellationError` when the task is
    ///   cancelled between chunks; the chunks before it were sent.
    func sendChunks(of data: Data, on channel: UInt32) async throws {
        try await forEachChunk(of: data.count) { range in
            let frame = data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)]
                .withUnsafeBytes {
                    FrameEncoder.chunkFrame(channel: channel, $0, makeBuffer: sendBuffers.buffer(capacity:))
                }
            try await sendChunk(frame, payloadLength: range.count, on: channel)
        }
    }

    /// Writes `buffer` on `channel` as CHUNK frames, as the `Data` version does, but without copying the
    /// bytes: each frame is a small header and a slice of `buffer`. In plaintext the socket writes the slice
    /// from where it is; encrypted, TLS encrypts it from there. The header then goes in a TLS record of its
    /// own, as the last 9 bytes of a whole frame did anyway (a 64 KiB payload fills four 16 KiB records).
    ///
    /// - Throws: what ``sendChunk(_:payloadLength:on:)`` throws, or `CancellationError` when the task is
    ///   cancelled between chunks; the chunks before it were sent.
    func sendChunks(of buffer: ByteBuffer, on channel: UInt32) async throws {
        try await forEachChunk(of: buffer.readableBytes) { range in
            let payload = buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count)!
            var header = allocator.buffer(capacity: FrameEncoder.chunkHeaderLength)
            FrameEncoder.writeChunkHeader(channel: channel, payloadLength: range.count, into: &header)
            try await sendChunk(header: header, payload: payload, on: channel)
        }
    }

    /// Calls `send` with the range of each chunk of `length` bytes, at most ``chunkPayloadLimit`` each, in order.
    private func forEachChunk(of length: Int, _ send: (Range<Int>) async throws -> Void) async throws {
        var offset = 0
        let chunkLength = chunkPayloadLimit
        while offset < length {
            // A chunk that finds credit and room does not suspend: cancellation is checked here too.
            try Task.checkCancellation()
            let end = min(offset + chunkLength, length)
            try await send(offset..<end)
            offset = end
        }
    }
}
