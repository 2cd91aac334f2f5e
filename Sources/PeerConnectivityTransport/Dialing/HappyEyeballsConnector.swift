import NIOCore
import NIOPosix
import PeerConnectivityCore

/// The I/O of ``HappyEyeballsStateMachine``: connects TCP sockets to the addresses it names, arms its
/// timer, feeds the outcomes back and carries out its verdicts, all on one event loop.
///
/// The sockets connect with reading off and nothing in their pipelines: the winner gets its handler only
/// once it has won, so that no loser ever sends HELLO (the peer would see an invitation that then vanishes).
enum HappyEyeballsConnector {
    /// Connects to the first address that answers.
    ///
    /// - Parameters:
    ///   - addresses: the addresses, in the order their source gave them.
    ///   - attemptDelay: the time between two attempts' starts.
    ///   - eventLoop: where every attempt and the timer run.
    ///   - connect: starts one attempt (a configured `ClientBootstrap`'s `connect(to:)`).
    /// - Returns: the winning channel, active, with reading off; or the failure of every attempt
    ///   (``AttemptsFailed``).
    static func connect(
        to addresses: [SocketAddress],
        attemptDelay: Duration = HappyEyeballsStateMachine<SocketAddress>.defaultAttemptDelay,
        on eventLoop: any EventLoop,
        connect: @escaping @Sendable (SocketAddress) -> EventLoopFuture<any Channel>
    ) -> EventLoopFuture<any Channel> {
        let promise = eventLoop.makePromise(of: (any Channel).self)
        let candidates = addresses.map { address in
            HappyEyeballsStateMachine<SocketAddress>.Candidate(address, address.protocol == .inet6 ? .ipv6 : .ipv4)
        }
        eventLoop.execute {
            let race = Race(
                machine: HappyEyeballsStateMachine(candidates: candidates, attemptDelay: attemptDelay),
                promise: promise,
                connect: connect
            )
            race.run(race.machine.start())
        }
        return promise.futureResult
    }

    /// Every attempt failed: what each address answered.
    struct AttemptsFailed: Error, CustomStringConvertible {
        /// The address and its failure, in the order they were tried.
        var attempts: [(address: String, error: String)]

        var description: String {
            guard !attempts.isEmpty else { return "no address to connect to" }
            return attempts.map { "\($0.address): \($0.error)" }.joined(separator: "; ")
        }
    }
}

/// One race, used only on its event loop (every callback hops there before touching it).
private final class Race {
    var machine: HappyEyeballsStateMachine<SocketAddress>
    private let promise: EventLoopPromise<any Channel>
    private let connect: @Sendable (SocketAddress) -> EventLoopFuture<any Channel>
    private var timer: Scheduled<Void>?
    private var connected: [SocketAddress: any Channel] = [:]
    private var failures: [(address: String, error: String)] = []

    init(
        machine: HappyEyeballsStateMachine<SocketAddress>,
        promise: EventLoopPromise<any Channel>,
        connect: @escaping @Sendable (SocketAddress) -> EventLoopFuture<any Channel>
    ) {
        self.machine = machine
        self.promise = promise
        self.connect = connect
    }

    private var eventLoop: any EventLoop { promise.futureResult.eventLoop }

    /// Carries out the machine's actions; attempts start last, so that one failing at once (its outcome
    /// fed back before `connect` returns) finds the timer in the state these actions left it.
    func run(_ actions: [HappyEyeballsStateMachine<SocketAddress>.Action]) {
        eventLoop.preconditionInEventLoop()
        var attempts: [SocketAddress] = []
        for action in actions {
            switch action {
            case .connect(let address):
                attempts.append(address)
            case .scheduleNextAttempt(let delay, let generation):
                timer?.cancel()
                let bound = NIOLoopBound(self, eventLoop: eventLoop)
                timer = eventLoop.scheduleTask(in: TimeAmount(delay)) {
                    let race = bound.value
                    race.run(race.machine.timerFired(generation: generation))
                }
            case .cancelTimer:
                timer?.cancel()
                timer = nil
            case .succeed(let address):
                if let channel = connected.removeValue(forKey: address) { promise.succeed(channel) }
            case .close(let address):
                connected.removeValue(forKey: address)?.close(promise: nil)
            case .fail:
                promise.fail(HappyEyeballsConnector.AttemptsFailed(attempts: failures))
            }
        }
        for address in attempts { start(address) }
    }

    private func start(_ address: SocketAddress) {
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        connect(address).hop(to: eventLoop).whenComplete { result in
            let race = bound.value
            switch result {
            case .success(let channel):
                race.connected[address] = channel
                race.run(race.machine.attemptConnected(address))
            case .failure(let error):
                race.failures.append((Platform.hostPort(address), "\(error)"))
                race.run(race.machine.attemptFailed(address))
            }
        }
    }
}
