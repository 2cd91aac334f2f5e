import Foundation
import PeerConnectivity
import Synchronization

/// What the reflector sends a runner of the stream or resource test, besides its hello: the streams it
/// opens (echoes) and its messages (resource confirmations). The session's receiver task delivers them;
/// the test reads them. Both sequences end, throwing, when the reflector leaves.
final class TransferInbox: Sendable {
    /// The streams the reflector opened, in order.
    let streams: AsyncThrowingStream<IncomingStream, any Error>
    /// The reflector's messages after its hello, in order.
    let messages: AsyncThrowingStream<Data, any Error>
    private let streamContinuation: AsyncThrowingStream<IncomingStream, any Error>.Continuation
    private let messageContinuation: AsyncThrowingStream<Data, any Error>.Continuation
    private let failure = Mutex<(any Error)?>(nil)

    /// Makes an empty inbox.
    ///
    /// - Parameter bufferedMessages: messages kept at most while nobody reads (the oldest are dropped):
    ///   the tests expect one confirmation per transfer, so a misbehaving reflector cannot grow memory.
    init(bufferedMessages: Int = 1_024) {
        (streams, streamContinuation) = AsyncThrowingStream.makeStream(of: IncomingStream.self)
        (messages, messageContinuation) = AsyncThrowingStream.makeStream(
            of: Data.self,
            bufferingPolicy: .bufferingNewest(bufferedMessages)
        )
    }

    /// Hands over a stream the reflector opened; it is cancelled if the inbox has ended.
    func deliver(_ stream: IncomingStream) {
        if case .terminated = streamContinuation.yield(stream) { stream.cancel() }
    }

    /// Hands over a message.
    func deliver(_ message: Data) {
        messageContinuation.yield(message)
    }

    /// Why the inbox ended (the reflector left), if it has.
    var departure: (any Error)? {
        failure.withLock { $0 }
    }

    /// Why the inbox ended, waiting up to `timeout` for it: a transfer fails as soon as its connection
    /// closes, and the session's event that the reflector left reaches the receiver task a moment later.
    ///
    /// - Parameter timeout: the longest wait.
    /// - Returns: the departure, or `nil` if the reflector has not left by then.
    func departure(within timeout: Duration) async -> (any Error)? {
        let deadline = ContinuousClock.now + timeout
        while departure == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return departure
    }

    /// Ends both sequences with `error` (the reflector left).
    func fail(_ error: any Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        streamContinuation.finish(throwing: error)
        messageContinuation.finish(throwing: error)
    }
}
