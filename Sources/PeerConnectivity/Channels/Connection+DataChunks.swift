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
