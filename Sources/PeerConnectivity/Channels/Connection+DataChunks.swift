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
        try await sendChunks(length: data.count, on: channel, sent: { _ in }) { range in
            data[(data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)].withUnsafeBytes {
                FrameEncoder.chunkFrame(channel: channel, $0, makeBuffer: sendBuffers.buffer(capacity:))
            }
        }
    }

    /// Writes `buffer` on `channel` as CHUNK frames, as the `Data` version does, but without copying the
    /// bytes on a connection in plaintext: each frame is a small header and a slice of `buffer`, which
    /// the socket writes from where it is. Encrypted, TLS copies every byte anyway and would write each
    /// buffer as a record of its own: the chunks are then copied into whole frames, as `Data`'s are.
    ///
    /// - Throws: what ``sendChunk(_:payloadLength:on:)`` throws, or `CancellationError` when the task is
    ///   cancelled between chunks; the chunks before it were sent.
    func sendChunks(of buffer: ByteBuffer, on channel: UInt32) async throws {
        guard !securityInfo.isEncrypted else {
            return try await sendChunks(length: buffer.readableBytes, on: channel, sent: { _ in }) { range in
                buffer.withUnsafeReadableBytes {
                    FrameEncoder.chunkFrame(
                        channel: channel,
                        UnsafeRawBufferPointer(rebasing: $0[range]),
                        makeBuffer: sendBuffers.buffer(capacity:)
                    )
                }
            }
        }
        var offset = 0
        let chunkLength = chunkPayloadLimit
        while offset < buffer.readableBytes {
            try Task.checkCancellation()
            let length = min(chunkLength, buffer.readableBytes - offset)
            var header = allocator.buffer(capacity: FrameEncoder.chunkHeaderLength)
            FrameEncoder.writeChunkHeader(channel: channel, payloadLength: length, into: &header)
            let payload = buffer.getSlice(at: buffer.readerIndex + offset, length: length)!
            try await sendChunk(header: header, payload: payload, on: channel)
            offset += length
        }
    }

    private func sendChunks(
        length: Int,
        on channel: UInt32,
        sent: (Int) -> Void,
        frame: (Range<Int>) -> ByteBuffer
    ) async throws {
        var offset = 0
        let chunkLength = chunkPayloadLimit
        while offset < length {
            // A chunk that finds credit and room does not suspend: cancellation is checked here too.
            try Task.checkCancellation()
            let end = min(offset + chunkLength, length)
            try await sendChunk(frame(offset..<end), payloadLength: end - offset, on: channel)
            sent(end - offset)
            offset = end
        }
    }
}
