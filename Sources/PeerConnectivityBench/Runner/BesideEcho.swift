import PeerConnectivity

/// `--beside-echo RATE` of the resource and folder tests: probes at RATE a second on the transfers' own
/// session, timed as the session's receiver reads their echoes; first on the idle session, then while
/// each measured transfer runs.
struct BesideEcho {
    /// The phases the probes are counted in.
    static let phases = ["idle", "transfers"]
    /// The shortest idle measurement.
    static let idleTime = Duration.seconds(1)
    /// The fewest probes of the idle measurement, at a low rate.
    static let idleProbes = 20
    /// How long the last probes may take to come back before they count as unanswered.
    static let grace = Duration.seconds(3)

    private let book = ProbeBook(phaseNames: phases)
    private let rate: Double
    private let session: Session
    private let peer: PeerID

    /// Routes the session's probe echoes to a new book.
    ///
    /// - Parameters:
    ///   - rate: probes a second.
    ///   - driver: the transfers' session.
    ///   - peer: the reflector.
    init(rate: Double, driver: SessionEchoDriver, peer: PeerID) {
        self.rate = rate
        session = driver.session
        self.peer = peer
        driver.routeProbes(to: book)
    }

    private var interval: Duration {
        .nanoseconds(Int64(1e9 / rate))
    }

    /// Probes the idle session for ``idleTime`` (``idleProbes`` at least) and waits for their echoes; the
    /// probes sent after belong to the transfers.
    func measureIdle() async {
        book.begin(phase: 0)
        let sender = start()
        try? await Task.sleep(for: max(Self.idleTime, interval * Self.idleProbes))
        sender.cancel()
        await sender.value
        await book.awaitOutstanding(upTo: Self.grace)
        book.begin(phase: 1)
    }

    /// Starts sending probes; they stop when the task is cancelled or the session fails.
    func start() -> Task<Void, Never> {
        // On the session's event loop, where the echoes are read: a probe costs no hop to it.
        Task(executorPreference: session.taskExecutor) { [session, peer, book, interval] in
            await ResponsivenessTest.sendProbes(.selfFlow, session: session, peer: peer, book: book, every: interval)
        }
    }

    /// Waits for the probes still out (up to ``grace``) and sums up both phases.
    func result() async -> BesideEchoResult {
        await book.awaitOutstanding(upTo: Self.grace)
        return BesideEchoResult(
            ratePerSecond: rate,
            probeBytes: LatencyProbe.size,
            idle: book.result(.selfFlow, phase: 0),
            duringTransfers: book.result(.selfFlow, phase: 1)
        )
    }
}
