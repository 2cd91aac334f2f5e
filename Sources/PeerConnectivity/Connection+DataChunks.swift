import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

extension Connection {
    /// Writes `data` on `channel` as CHUNK frames of at most ``FrameEncoder/chunkPayloadLength`` bytes,
    /// each copied into the connection's pooled send buffers, waiting for credit and room as
    /// ``sendChunk(_:payloadLength:on:)`` does (a stream's write, a large message).
    ///
    /// - Throws: what ``sendChunk(_:payloadLength:on:)`` throws; the chunks before it were sent.
    func sendChunks(of data: Data, on channel: UInt32) async throws {
        var offset = data.startIndex
        while offset < data.endIndex {
            let end = min(offset + FrameEncoder.chunkPayloadLength, data.endIndex)
            let frame = data[offset..<end].withUnsafeBytes {
                FrameEncoder.chunkFrame(channel: channel, $0, makeBuffer: sendBuffers.buffer(capacity:))
            }
            try await sendChunk(frame, payloadLength: end - offset, on: channel)
            offset = end
        }
    }
}
