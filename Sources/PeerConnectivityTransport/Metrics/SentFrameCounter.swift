import NIOCore
import PeerConnectivityCore

/// Counts the frames and bytes a ``ConnectionHandler`` writes, for its ``ConnectionMetrics``.
///
/// Sits right in front of the connection handler, so it sees frames in the clear (a TLS handler
/// goes in front of both). A frame is counted where its length prefix is: a large DATA frame written
/// as several buffers counts once. What it counts is recorded at each flush.
final class SentFrameCounter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let metrics: ConnectionMetrics
    /// Bytes of the current frame still to come in later writes.
    private var remainingInFrame = 0
    /// A length prefix was cut across two writes: frames are no longer counted (bytes still are).
    private var lostTrack = false

    /// - Parameter metrics: the connection's metrics.
    init(metrics: ConnectionMetrics) {
        self.metrics = metrics
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        metrics.sent(frames: countFrames(in: buffer), bytes: buffer.readableBytes)
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        metrics.flushSent()
        context.flush()
    }

    /// The frames whose length prefix is in `buffer`, following frames across writes.
    private func countFrames(in buffer: ByteBuffer) -> Int {
        var offset = buffer.readerIndex
        let end = buffer.writerIndex
        var frames = 0
        while !lostTrack, offset < end {
            if remainingInFrame == 0 {
                guard let length = buffer.getInteger(at: offset, as: UInt32.self) else {
                    lostTrack = true
                    break
                }
                frames += 1
                remainingInFrame = 4 + Int(length)
            }
            let taken = min(remainingInFrame, end - offset)
            remainingInFrame -= taken
            offset += taken
        }
        return frames
    }
}
