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
///
/// Out of descriptors, it also lets go of the process's ``DescriptorReserve`` for the pause, so that the rest of
/// the process has some to open, and ends the pause only once the reserve is back with one to spare. A connection
/// that takes the last descriptor beside the reserve pauses accepting the same way: `accept` fails only while
/// another connection waits, and with none waiting the process would sit at its limit, the reserve still held.
/// (The listener accepts one connection per read, so that none is accepted past that check.)
final class AcceptBackoff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel

    /// How long accepting pauses.
    static let pause = TimeAmount.milliseconds(200)

    private let logger: Logger
    private let warnings: WarningBudget
    private var resume: Scheduled<Void>?
    private let reserve = DescriptorReserve.shared

    init(logger: Logger, warnings: WarningBudget) {
        self.logger = logger
        self.warnings = warnings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        guard resume == nil, !reserve.refill(spare: 1) else { return }
        pauseAccepting(context.channel, because: "out of file descriptors", outOfDescriptors: true)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let failure = error as? IOError, Platform.isResourceExhaustion(failure.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard resume == nil else { return }
        let outOfDescriptors = Platform.isOutOfFileDescriptors(failure.errnoCode)
        let why = outOfDescriptors ? "out of file descriptors" : "\(failure)"
        pauseAccepting(context.channel, because: why, outOfDescriptors: outOfDescriptors)
    }

    /// Stops accepting for the pause, letting go of the reserve when out of descriptors, and says so.
    private func pauseAccepting(_ channel: any Channel, because why: String, outOfDescriptors: Bool) {
        if outOfDescriptors { reserve.release() }
        warnings.warn(
            "cannot accept connections (\(why)): pausing \(Self.pause.nanoseconds / 1_000_000) ms",
            to: logger
        )
        try? channel.syncOptions?.setOption(.autoRead, value: false)
        pause(channel, untilDescriptorsFree: outOfDescriptors)
    }

    /// Turns accepting back on after the pause; out of descriptors, only once the reserve is back with one
    /// to spare (else it pauses again, the reserve still free).
    private func pause(_ channel: any Channel, untilDescriptorsFree: Bool) {
        resume = channel.eventLoop.assumeIsolated().scheduleTask(in: Self.pause) { [self] in
            resume = nil
            guard !untilDescriptorsFree || reserve.refill(spare: 1) else {
                pause(channel, untilDescriptorsFree: true)
                return
            }
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }
}
