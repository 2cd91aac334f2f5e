import NIOCore
import NIOSSL
import NIOTLS

/// The end of a ``TLSEchoDriver``'s pipeline: says when the TLS handshake is done, and hands each
/// echoed frame to the phase under way.
final class TLSEchoReceiver: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let phase: CurrentPhase
    private let pattern: PayloadPattern
    private var handshake: EventLoopPromise<Void>?
    /// Succeeds when the TLS handshake is done; fails when the connection ends before.
    let handshakeCompleted: EventLoopFuture<Void>

    init(phase: CurrentPhase, pattern: PayloadPattern, eventLoop: any EventLoop) {
        self.phase = phase
        self.pattern = pattern
        let promise = eventLoop.makePromise(of: Void.self)
        handshake = promise
        handshakeCompleted = promise.futureResult
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { finishHandshake(nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finishHandshake(BenchError.disconnected("the raw TLS echo connection closed during its handshake"))
    }

    private func finishHandshake(_ error: (any Error)?) {
        guard let promise = handshake else { return }
        handshake = nil
        if let error { promise.fail(error) } else { promise.succeed() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let now = MonotonicClock.now()
        guard let current = phase.current else { return }
        let inspection = frame.withUnsafeReadableBytes { pattern.inspect($0, expectedSize: current.size) }
        current.controller.received(inspection, at: now)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finishHandshake(BenchError.disconnected("the raw echo server closed the TLS connection"))
        phase.current?.controller.fail(BenchError.disconnected("the raw echo server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finishHandshake(error)
        phase.current?.controller.fail(BenchError.disconnected("the raw TLS echo connection failed: \(error)"))
        context.close(promise: nil)
    }
}
