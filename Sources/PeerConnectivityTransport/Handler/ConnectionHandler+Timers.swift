import NIOCore
import PeerConnectivityCore

/// The handshake deadline, the keepalive timer, the unsent bytes' next look and the receive pool's shrinking, on the
/// channel's event loop.
extension ConnectionHandler {
    /// Starts the handshake deadline the state machine named, in place of any running one.
    func scheduleDeadline(after timeout: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            deadline = nil
            run(stateMachine.deadlinePassed())
        }
    }

    /// Starts the next keepalive tick, at the machine's keepalive interval.
    func scheduleKeepalive(context: ChannelHandlerContext) {
        keepalive = context.eventLoop.assumeIsolated().scheduleTask(in: stateMachine.keepaliveInterval) { [self] in
            keepalive = nil
            let action = stateMachine.keepaliveTick()
            run(action)
            if case .send = action {
                scheduleKeepalive(context: context)
            }
        }
    }

    /// Stops the timers (the connection is closing, or the handler was removed).
    func cancelTimers() {
        deadline?.cancel()
        deadline = nil
        keepalive?.cancel()
        keepalive = nil
        unsentRecheck?.cancel()
        unsentRecheck = nil
        lingerLimit?.cancel()
        lingerLimit = nil
        receivePoolShrink?.cancel()
        receivePoolShrink = nil
    }
}
