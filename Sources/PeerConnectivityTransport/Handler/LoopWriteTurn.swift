import NIOCore
import NIOPosix

/// The ``WriteTurnBudget`` of one event loop, shared by the connection handlers on it, the handlers waiting for
/// its next turn, and the pipe that tells it the loop has polled.
///
/// The loop polls only once no task is left, and reads the pipe's byte then: so a turn that ran out writes a
/// byte into the pipe, and the pipe's read (after the poll) lets the waiting handlers go on. A loop that takes no
/// pipe (a test's embedded loop) falls back to a timer, ``WriteTurnBudget/wakeAfter``.
///
/// Used only on its event loop's thread: each thread keeps its own (``current(on:)``), and a handler takes it
/// once, on its event loop, when it is added.
final class LoopWriteTurn: @unchecked Sendable {
    /// The turn of each event loop's thread.
    private static let perThread = ThreadSpecificVariable<LoopWriteTurn>()

    /// The loop's turn, made on first use; call it on `eventLoop`.
    ///
    /// - Parameter eventLoop: the event loop the caller runs on.
    /// - Returns: its turn.
    static func current(on eventLoop: any EventLoop) -> LoopWriteTurn {
        if let turn = perThread.currentValue, turn.eventLoop === eventLoop {
            return turn
        }
        // A thread's first loop, or (an embedded loop in a test) another loop on the same thread.
        let turn = LoopWriteTurn(eventLoop: eventLoop)
        perThread.currentValue = turn
        turn.openPollSignal()
        return turn
    }

    let eventLoop: any EventLoop
    // Read and written on every drain and read, always on the loop's thread: unchecked, as the handler's hot state.
    @exclusivity(unchecked) private var budget = WriteTurnBudget()
    @exclusivity(unchecked) private var waiting: [ConnectionHandler] = []
    /// The fallback wake, on a loop without the pipe.
    private var wake: Scheduled<Void>?
    /// The pipe's write end once its read end is on the loop; -1 before and after.
    private var signalDescriptor: CInt = -1
    /// A byte is in the pipe, not read yet.
    private var signalled = false

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Puts a pipe's read end on the loop, whose bytes say it polled; nothing on a loop that takes none.
    private func openPollSignal() {
        guard let bootstrap = NIOPipeBootstrap(validatingGroup: eventLoop) else { return }
        guard let (input, output) = Platform.makeSignalPipe() else { return }
        bootstrap.channelInitializer { [self] channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(PollSignalReader(turn: self))
            }
        }
        .takingOwnershipOfDescriptor(input: input)
        .assumeIsolated()
        .whenComplete { [self] result in
            switch result {
            case .success(let channel):
                signalDescriptor = output
                // The loop's group is shutting down: no more bytes, the timer from now on.
                channel.closeFuture.assumeIsolated().whenComplete { [self] _ in
                    signalDescriptor = -1
                    Platform.close(output)
                }
            case .failure:
                Platform.close(input)
                Platform.close(output)
            }
        }
    }

    /// Bytes of channel frames a drain may still write before the loop polls.
    var room: Int { budget.room }

    /// A drain wrote `bytes` of channel frames.
    func wrote(_ bytes: Int) {
        budget.wrote(bytes)
    }

    /// `handler` found no room: its drain runs again in the next turn.
    func wait(_ handler: ConnectionHandler) {
        if !handler.waitsForTurn {
            handler.waitsForTurn = true
            waiting.append(handler)
        }
        act(budget.wait())
    }

    /// A handler of this loop read, or the pipe did: the loop polled.
    func polled() {
        guard !budget.isFresh else { return }
        act(budget.polled())
    }

    /// The pipe's byte was read: the loop polled.
    fileprivate func signalRead() {
        signalled = false
        polled()
    }

    private func act(_ action: WriteTurnBudget.Action) {
        switch action {
        case .none:
            break
        case .scheduleWake:
            if signalDescriptor >= 0 {
                guard !signalled else { return }
                signalled = Platform.signal(signalDescriptor)
                if signalled { return }
            }
            wake = eventLoop.assumeIsolated().scheduleTask(in: WriteTurnBudget.wakeAfter) { [self] in
                wake = nil
                if budget.woke() { resumeWaiting() }
            }
        case .resumeWaiting:
            // Behind the reads this poll brought, which may hold the messages the waiting transfers delayed.
            eventLoop.assumeIsolated().execute { [self] in
                if budget.resumed() {
                    wake?.cancel()
                    wake = nil
                }
                resumeWaiting()
            }
        }
    }

    private func resumeWaiting() {
        let handlers = waiting
        waiting = []
        for handler in handlers {
            handler.waitsForTurn = false
            handler.drainOutgoing()
        }
    }
}

/// Reads the bytes of a ``LoopWriteTurn``'s pipe, which come after the loop polled.
private final class PollSignalReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let turn: LoopWriteTurn

    init(turn: LoopWriteTurn) {
        self.turn = turn
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        turn.signalRead()
    }
}
