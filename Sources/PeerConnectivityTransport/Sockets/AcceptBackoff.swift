import Logging
import NIOCore

/// Pauses a listener's accepting for a moment when `accept` fails for want of resources (out of file
/// descriptors, buffers or memory); the connections wait in the backlog meanwhile.
///
/// Without it the listener spins: the listening socket stays readable while a connection waits, and NIO
/// calls `accept` again at once, thousands of times a second. (NIO's `AcceptBackoffHandler` delays the
/// next `read`, but after a failed accept NIO keeps the socket registered for reading, so it spins all
/// the same.) The pause turns reading off (`autoRead`), which takes the socket out of the event loop's
/// poll, and back on when it is over. Each pause is logged, within the warning budget.
final class AcceptBackoff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel

    /// How long accepting pauses.
    static let pause = TimeAmount.milliseconds(200)

    private let logger: Logger
    private let warnings: WarningBudget
    private var resume: Scheduled<Void>?

    init(logger: Logger, warnings: WarningBudget) {
        self.logger = logger
        self.warnings = warnings
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let failure = error as? IOError, Platform.isResourceExhaustion(failure.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard resume == nil else { return }
        let why = Platform.isOutOfFileDescriptors(failure.errnoCode) ? "out of file descriptors" : "\(failure)"
        warnings.warn(
            "cannot accept connections (\(why)): pausing \(Self.pause.nanoseconds / 1_000_000) ms",
            to: logger
        )
        let channel = context.channel
        try? channel.syncOptions?.setOption(.autoRead, value: false)
        resume = context.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) { [self] in
            resume = nil
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }
}
