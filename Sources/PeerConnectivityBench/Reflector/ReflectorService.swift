import Foundation
import PeerConnectivity
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The reflector: advertises, accepts each runner's invitation into a session of its own, sends it a
/// ``ReflectorHello``, echoes every data message back to its sender in the mode it came in, echoes
/// every stream back on a stream of the same name, and confirms every resource with the size and
/// SHA-256 of the file received (then deletes it); optionally runs a ``RawEchoServer`` beside it for
/// the raw-tcp baseline.
///
/// A session per runner keeps runners apart (one runner's backlog never delays another's echoes) and
/// lifts the 8-peer limit of one session: ``ReflectorConfiguration/maximumRunners`` bounds them.
public final class ReflectorService: Sendable {
    /// A runner served now.
    private struct Runner {
        var peer: PeerID
        var session: Session
        var address: String
        var activity: RunnerActivity
        var task: Task<Void, Never>?
        var dropped = false
    }

    private struct State {
        var nextRunner = 0
        var runners: [Int: Runner] = [:]
        /// Who holds the places, per source; an evicted runner holds none while its session ends.
        var places: RunnerPlaces
        /// Which runners were served at the same time, for their reports.
        var coRunners = CoRunnerBook()
        /// The tasks telling evicted runners and disconnecting them, by runner id.
        var evictions: [Int: Task<Void, Never>] = [:]
        var acceptLoop: Task<Void, Never>?
        var idleSweep: Task<Void, Never>?
        var started = false
        var stopped = false

        /// Forgets a runner that left (nothing when it was forgotten already).
        mutating func remove(_ id: Int) {
            runners[id] = nil
            places.left(id)
            coRunners.left(id)
        }
    }

    /// The reflector's identity.
    public let peer: PeerID
    /// What it was started with.
    public let configuration: ReflectorConfiguration
    /// What it tells runners about itself.
    public let hello: ReflectorHello
    private let advertiser: Advertiser
    private let rawEchoServer: RawEchoServer?
    /// Where this reflector's sessions put received resources.
    public let resourceDirectory: URL
    private let ownsResourceDirectory: Bool
    let log: @Sendable (String) -> Void
    private let state: Mutex<State>

    /// Binds the raw echo port (if any) and prepares the advertiser; nothing is served until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: name, service type, ports and limits.
    ///   - log: where connections, their ends and failures are reported, one line each.
    /// - Throws: `PeerIDError` for a bad name, `DiscoveryError` for a bad service type,
    ///   ``BenchError/socket(_:errno:)`` when the raw echo port cannot be bound.
    public init(configuration: ReflectorConfiguration, log: @escaping @Sendable (String) -> Void) throws {
        self.configuration = configuration
        self.log = log
        state = Mutex(
            State(
                places: RunnerPlaces(
                    maximum: configuration.maximumRunners,
                    maximumPerSource: configuration.maximumRunnersPerAddress
                )
            )
        )
        peer = try PeerID(displayName: configuration.name)
        ownsResourceDirectory = configuration.resourceDirectory == nil
        resourceDirectory =
            configuration.resourceDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "reflector-resources-\(UUID().uuidString)",
                isDirectory: true
            )
        rawEchoServer = try configuration.rawEchoPort.map { port throws(BenchError) in
            // The raw-TCP baseline's socket is IPv4 only: "::" means every IPv4 interface to it.
            let host = configuration.host == DualStack.anyAddress ? DualStack.anyIPv4Address : configuration.host
            return try RawEchoServer(host: host, port: port, log: log)
        }
        hello = ReflectorHello(name: configuration.name, host: HostInfo.current(), rawEchoPort: rawEchoServer?.port)
        var discoveryInfo = hello.host.discoveryInfo
        discoveryInfo[ReflectorConnection.rawEchoPortKey] = rawEchoServer.map { String($0.port) }
        var advertiserConfiguration = Advertiser.Configuration.default
        advertiserConfiguration.host = configuration.host
        advertiserConfiguration.port = configuration.port
        advertiserConfiguration.publishesService = configuration.publishesService
        advertiserConfiguration.handshakeTimeout = configuration.handshakeTimeout
        advertiserConfiguration.invitationsPerSecondPerAddress = configuration.invitationsPerSecondPerAddress
        advertiserConfiguration.ipv6PrefixLength = configuration.ipv6PrefixLength
        advertiserConfiguration.invitationBurstPerAddress = max(
            1,
            Int(configuration.invitationsPerSecondPerAddress * 4)
        )
        advertiser = try Advertiser(
            peer: peer,
            discoveryInfo: discoveryInfo,
            serviceType: configuration.serviceType,
            encryptionPreference: configuration.encryption,
            configuration: advertiserConfiguration
        )
    }

    /// The session port, once started.
    public var port: Int? { advertiser.port }
    /// The raw echo port, if it runs one.
    public var rawEchoPort: Int? { rawEchoServer?.port }

    /// Starts the raw echo server, the session listener and the DNS-SD service, and answers invitations.
    ///
    /// - Throws: `DiscoveryError` when listening or registering fails (e.g. avahi-daemon not running).
    public func start() async throws {
        rawEchoServer?.start()
        try await advertiser.start()
        let loop = Task { [self] in
            for await invitation in advertiser.invitations {
                admit(invitation)
            }
        }
        let sweep = configuration.idleTimeout.map { idleTimeout in
            Task { [self] in await dropIdleRunners(idleTimeout: idleTimeout) }
        }
        state.withLock { state in
            state.acceptLoop = loop
            state.idleSweep = sweep
            state.started = true
        }
    }

    /// Whether ``start()`` has completed.
    public var isStarted: Bool {
        state.withLock { $0.started }
    }

    /// Runners served now, and runners admitted since the start.
    public var runnerCounts: (serving: Int, served: Int) {
        state.withLock { ($0.runners.count, $0.nextRunner) }
    }

    /// Stops advertising, says goodbye to every runner (`Session.disconnect()`) and stops the raw echo server.
    public func stop() async {
        let (sessions, loop, sweep, evictions) = state.withLock { state in
            state.stopped = true
            return (
                state.runners.values.map(\.session), state.acceptLoop, state.idleSweep, Array(state.evictions.values)
            )
        }
        await advertiser.stop()
        loop?.cancel()
        sweep?.cancel()
        evictions.forEach { $0.cancel() }
        for session in sessions {
            await session.disconnect()
        }
        rawEchoServer?.stop()
        if ownsResourceDirectory { try? FileManager.default.removeItem(at: resourceDirectory) }
    }

    /// Runners served now.
    public var runnerCount: Int {
        state.withLock { $0.runners.count }
    }

    /// Takes a runner's invitation into a session of its own, unless the reflector is full, or full for
    /// the runner's source: then it is declined as busy. When every place is held and the runner's source
    /// holds none, it takes the place of the longest-held runner of the source that holds the most
    /// (``RunnerPlaces``).
    private func admit(_ invitation: Invitation) {
        let runner = invitation.peer
        let name = LogSafe.escaped(runner.displayName)
        let address = invitation.address ?? "?"
        let source = AdmissionKey(address: address, ipv6PrefixLength: configuration.ipv6PrefixLength)
        var sessionConfiguration = Session.Configuration.default
        // Invitations are admitted one at a time: whether others are served cannot change meanwhile.
        let alone = state.withLock { $0.runners.isEmpty }
        sessionConfiguration.streamWindow =
            configuration.streamWindow
            ?? (alone ? ReflectorConfiguration.aloneStreamWindow : ReflectorConfiguration.sharedStreamWindow)
        sessionConfiguration.resourceDirectory = resourceDirectory
        // A reflector serves runners and joins no mesh: no member listener, no introductions to dial.
        sessionConfiguration.joinsMesh = false
        sessionConfiguration.maximumResourceSize = configuration.maximumResourceSize
        sessionConfiguration.processLargeMessageBudget = configuration.largeMessageBudget
        sessionConfiguration.datagramPorts = configuration.datagramPorts
        sessionConfiguration.livenessTimeout = configuration.livenessTimeout
        // Only for a runner that resumes links itself: on a link that is never resumed, reconnection would
        // still send the echoes through the resend ledger, and move the data test's figures.
        let reconnects = configuration.reconnection != nil && RunnerInvitation.asksForReconnection(invitation.context)
        sessionConfiguration.reconnection = reconnects ? configuration.reconnection : nil
        // A responsiveness runner's load must not wait in this side's buffers either.
        sessionConfiguration.notSentLowWatermark = RunnerInvitation.notSentLowWatermark(in: invitation.context)
        sessionConfiguration.gatesUnsentBytes = RunnerInvitation.gatesUnsentBytes(in: invitation.context)
        sessionConfiguration.congestionControl = RunnerInvitation.congestionControl(in: invitation.context)
        // Messages are echoed where the session reads them, with no task between a message and its echo.
        let activity = RunnerActivity(clock: configuration.idleClock)
        let runnerEcho = RunnerEcho(activity: activity)
        sessionConfiguration.messageResponder = runnerEcho.responder
        let session = Session(
            peer: peer,
            encryptionPreference: configuration.encryption,
            configuration: sessionConfiguration
        )
        let admitted = state.withLock { state -> Result<(Int, Eviction?), Refusal> in
            guard !state.stopped else { return .failure(Refusal("the reflector is stopping")) }
            var eviction: Eviction?
            switch state.places.arrived(state.nextRunner + 1, from: source) {
            case .refused(let detail):
                return .failure(Refusal(detail))
            case .admitted:
                break
            case .admittedEvicting(let victim):
                if let evicted = state.runners[victim] {
                    state.runners[victim]?.dropped = true
                    let key = AdmissionKey(address: evicted.address, ipv6PrefixLength: configuration.ipv6PrefixLength)
                    eviction = Eviction(
                        id: victim,
                        peer: evicted.peer,
                        session: evicted.session,
                        address: evicted.address,
                        source: key,
                        placesLeft: state.places.count(of: key)
                    )
                }
            }
            state.nextRunner += 1
            state.runners[state.nextRunner] = Runner(
                peer: runner,
                session: session,
                address: address,
                activity: activity
            )
            state.coRunners.arrived(state.nextRunner, label: "\(runner.displayName) (\(address))")
            return .success((state.nextRunner, eviction))
        }
        let id: Int
        switch admitted {
        case .failure(let refusal):
            log("busy: declined runner=\(name) address=\(address): \(refusal.detail)")
            invitation.declineAsBusy(detail: refusal.detail)
            return
        case .success(let (admittedID, eviction)):
            id = admittedID
            if let eviction { evict(eviction, for: name, address: address, source: source) }
        }
        let context = LogSafe.escaped(String(decoding: invitation.context, as: UTF8.self), limit: 200)
        // On the session's event loop: what this task answers is sent from the thread that read it.
        let task = Task(executorPreference: session.taskExecutor) { [self] in
            defer { state.withLock { $0.remove(id) } }
            do {
                try await invitation.accept(into: session)
            } catch {
                log("accepting runner=\(name) address=\(address) failed: \(error)")
                return
            }
            log(
                "invited by runner=\(name) address=\(address) context=\"\(context)\" "
                    + "stream-window=\(sessionConfiguration.streamWindow)" + (reconnects ? " reconnection=on" : "")
                    + (sessionConfiguration.congestionControl.map { " congestion=\($0)" } ?? "")
            )
            guard state.withLock({ $0.runners[id] != nil }) else { return }
            var hello = hello
            hello.streamWindow = sessionConfiguration.streamWindow
            hello.notSentLowWatermark = sessionConfiguration.notSentLowWatermark
            await serve(session, id: id, runner: runner, hello: hello, echo: runnerEcho, activity: activity)
        }
        // A runner that is gone already has no entry to keep its task in.
        state.withLock { $0.runners[id]?.task = task }
    }

    /// A runner whose place a newcomer takes.
    private struct Eviction: Sendable {
        let id: Int
        let peer: PeerID
        let session: Session
        let address: String
        let source: AdmissionKey
        /// Places its source holds once it is gone.
        let placesLeft: Int
    }

    /// Logs an eviction, tells the runner why (``RunnerEviction``) and disconnects it; its task then ends and
    /// forgets it. In a task of its own, so that the invitations behind the newcomer's are not held up: the
    /// notice has a second to go out (a runner that reads nothing cannot hold it up longer), then the session
    /// ends, and with it a send still waiting.
    private func evict(_ eviction: Eviction, for newcomer: String, address: String, source: AdmissionKey) {
        let evicted = LogSafe.escaped(eviction.peer.displayName)
        let detail =
            "every place was held, \(eviction.placesLeft + 1) of them by \(eviction.source); "
            + "a runner from \(source), which held none, took this one's"
        log(
            "evicting runner=\(evicted) address=\(eviction.address) for runner=\(newcomer) address=\(address): "
                + "every place held, \(eviction.placesLeft + 1) by \(eviction.source), none by \(source)"
        )
        let notice = RunnerEviction(detail: detail).encoded()
        // Made under the lock, so that it is kept before it can end and forget itself.
        state.withLock { state in
            state.evictions[eviction.id] = Task { [self] in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try? await eviction.session.send(notice, toPeers: [eviction.peer], mode: .reliable)
                    }
                    group.addTask { try? await Task.sleep(for: .seconds(1)) }
                    await group.next()
                    group.cancelAll()
                    await eviction.session.disconnect()
                }
                _ = self.state.withLock { $0.evictions.removeValue(forKey: eviction.id) }
            }
        }
    }

    /// Why a runner was turned away.
    private struct Refusal: Error {
        let detail: String
        init(_ detail: String) { self.detail = detail }
    }

    /// Every second of the idle clock, drops the runners that have done nothing but keep their link alive for
    /// `idleTimeout`, so that idle sessions cannot hold the reflector's places; returns when cancelled.
    /// One task for all runners: a sleeping task per runner would keep its timer after the runner left.
    private func dropIdleRunners(idleTimeout: Duration) async {
        let clock = configuration.idleClock
        while (try? await clock.sleep(for: .seconds(1))) != nil {
            let now = clock.now
            let idle = state.withLock { state -> [(PeerID, Session)] in
                var idle: [(PeerID, Session)] = []
                for (id, runner) in state.runners where !runner.dropped {
                    guard let deadline = runner.activity.idleDeadline(after: idleTimeout), deadline <= now else {
                        continue
                    }
                    state.runners[id]?.dropped = true
                    idle.append((runner.peer, runner.session))
                }
                return idle
            }
            for (peer, session) in idle {
                log("dropping runner=\(LogSafe.escaped(peer.displayName)): nothing but keepalives for \(idleTimeout)")
                await session.disconnect()
            }
        }
    }

    /// Serves the runner until it leaves: its messages are echoed by `echo`, where the session reads them (or
    /// here, for a session with reconnection); its streams and resources are handled by tasks of their own,
    /// which are cancelled when it leaves.
    private func serve(
        _ session: Session,
        id: Int,
        runner: PeerID,
        hello: ReflectorHello,
        echo: RunnerEcho,
        activity: RunnerActivity
    ) async {
        let started = ContinuousClock.now
        var cpuAtConnect = CPUTime.ofThisProcess()
        var streams = 0
        var resources = 0
        var resumptions = 0
        var greeted = false
        var transfers: [Task<Void, Never>] = []
        defer { transfers.forEach { $0.cancel() } }
        // The runner's connection as this kernel sees it, sampled from its hello to the report.
        let sampler = LinkSampler()
        defer { sampler.stop() }
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, .connected, _) where peer == runner && greeted:
                // A link resumed by reconnection: the same runner, its hello already sent.
                resumptions += 1
                activity.touch()
                log("resumed runner=\(LogSafe.escaped(peer.displayName)) resumptions=\(resumptions)")
            case .peerStateChanged(let peer, .connecting, let reason) where peer == runner && greeted:
                log(
                    "link to runner=\(LogSafe.escaped(peer.displayName)) dropped "
                        + "reason=\(reason.map { "\($0)" } ?? "none"): reconnecting"
                )
            case .peerStateChanged(let peer, .connected, _) where peer == runner:
                greeted = true
                activity.touch()
                cpuAtConnect = CPUTime.ofThisProcess()
                let security = session.securityInfo(for: peer)?.summary ?? "unknown"
                log(
                    "connected runner=\(LogSafe.escaped(peer.displayName)) id=\(peer.id.uuidString.lowercased()) "
                        + "runners=\(runnerCount) security=\"\(security)\""
                )
                var hello = hello
                hello.congestionControl = await session.linkReport(for: peer)?.congestionControl
                sampler.start(session, peer: peer)
                do {
                    try await session.send(hello.encoded(), toPeers: [peer], mode: .reliable)
                } catch {
                    log("hello to runner=\(LogSafe.escaped(peer.displayName)) failed: \(error)")
                }
            case .peerStateChanged(let peer, .notConnected, let reason) where peer == runner:
                let seconds = started.duration(to: .now).components.seconds
                let (messages, bytes) = echo.echoed
                log(
                    "ended runner=\(LogSafe.escaped(peer.displayName)) reason=\(reason.map { "\($0)" } ?? "none") "
                        + "echoed=\(messages) bytes=\(bytes) streams=\(streams) resources=\(resources) after \(seconds) s"
                        + (resumptions > 0 ? " resumptions=\(resumptions)" : "")
                )
                return
            case .peerStateChanged:
                break
            case .startedReceivingResource:
                activity.began()
            case .streamReceived(let stream):
                streams += 1
                activity.began()
                let oneWay = stream.name.hasPrefix(StreamTest.oneWayPrefix)
                // Read (and checked, or echoed) on the session's event loop, which delivers the chunks: no thread
                // woken for each, so that a bulk test measures the link more than the hand-offs between threads
                // (Session.streamExecutor).
                transfers.append(
                    Task(executorPreference: session.streamExecutor) { [log] in
                        defer { activity.ended() }
                        if oneWay {
                            await Self.receive(stream, in: session, log: log)
                        } else {
                            await Self.echo(stream, in: session, log: log)
                        }
                    }
                )
            case .finishedReceivingResource(let name, let peer, let result):
                resources += 1
                transfers.append(
                    Task { [log] in
                        defer { activity.ended() }
                        await Self.confirm(name, result, to: peer, in: session, log: log)
                    }
                )
            case .dataReceived(let data, let peer, let mode):
                switch echo.respond(to: data, mode: mode) {
                case .deliver where data == ReflectorReport.request:
                    let elapsed = started.duration(to: .now)
                    var report = ReflectorReport(
                        cpu: CPUTime.ofThisProcess().since(cpuAtConnect),
                        seconds: elapsed.seconds
                    )
                    (report.sharedWith, report.sharedWithCount) = state.withLock { $0.coRunners.others(of: id) }
                    report.link = await session.linkReport(for: peer).map(LinkSample.init)
                    let links = sampler.samples(endingWith: report.link)
                    report.links = links.isEmpty ? nil : links
                    let peak = ProcessSample.current().peakResidentBytes
                    report.peakResidentBytes = peak > 0 ? peak : nil
                    try? await session.send(report.encoded(), toPeers: [peer])
                case .deliver:
                    guard let request = BulkRequest.decoded(from: data) else { break }
                    streams += 1
                    activity.began()
                    transfers.append(
                        Task(executorPreference: session.streamExecutor) { [log] in
                            defer { activity.ended() }
                            await Self.writeReverse(request, to: peer, in: session, log: log)
                        }
                    )
                case .consumed:
                    break
                case .reply(let reply):
                    do {
                        try await session.send(reply, toPeers: [peer], mode: mode)
                    } catch {
                        // The runner is gone; its notConnected event follows and ends the loop.
                        log("echo to runner=\(LogSafe.escaped(peer.displayName)) failed: \(error)")
                    }
                }
            }
        }
    }
}
