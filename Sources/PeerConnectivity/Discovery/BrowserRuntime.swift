import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The state behind a ``Browser``: a `Mutex` around a ``BrowserStateMachine``, which decides what to
/// resolve, when to try again and which peers are found or lost, and the I/O that carries its actions
/// out: `DNSServiceResolve` in a task per resolve, retry timers on the peer's event loop, events.
///
/// Events are yielded into ``events`` while the lock is held, so that a subscriber's snapshot of the
/// found peers (taken under the same lock) and the events after it fit together exactly. Tasks and
/// timers are started under the lock too (neither runs anything there), so that their handles are
/// recorded before anything can cancel them; cancelling and logging wait until the lock is released.
final class BrowserRuntime: Sendable {
    /// Resolves one instance within a timeout: `DNSServiceResolution.resolve`, or a test's stand-in.
    typealias Resolver = @Sendable (DNSServiceInstance, Duration) async throws -> ResolvedService
    /// A host's addresses from its A and AAAA records within a timeout: `DNSServiceAddressQuery`, or a
    /// test's stand-in.
    typealias AddressQuery =
        @Sendable (_ host: String, _ port: Int, _ timeout: Duration) async throws -> [SocketAddress]
    /// How long ``dialTarget(of:)`` waits for a first address record before it leaves the host name to the
    /// system resolver.
    static let addressTimeout = Duration.milliseconds(1500)
    private typealias Machine = BrowserStateMachine<SystemRandomNumberGenerator>

    private enum Phase {
        case idle
        case started(DNSServiceBrowse)
        case stopped
    }

    private struct State {
        var phase = Phase.idle
        var machine = Machine(random: SystemRandomNumberGenerator())
        /// The resolve under way per instance name, with its generation.
        var resolves: [String: (generation: UInt64, task: Task<Void, Never>)] = [:]
        /// The retry timer pending per instance name, with its generation.
        var retries: [String: (generation: UInt64, timer: Scheduled<Void>)] = [:]
        /// Why browsing ended, when it failed.
        var failure: DiscoveryError?
    }

    private let peer: PeerID
    private let ownInstanceName: String
    private let registrationType: String
    private let configuration: Browser.Configuration
    private let resolver: Resolver
    private let addressQuery: AddressQuery
    /// Where retry timers run: the event loop of this peer's I/O.
    private let eventLoop: any EventLoop
    private let state = Mutex(State())
    /// Found and lost peers for every subscriber (``Browser/Events``); nothing is kept for later ones:
    /// each starts from a snapshot instead.
    let events = EventHub<BrowserEvent>(keepsEarlyEvents: false)

    init(
        peer: PeerID,
        serviceType: String,
        configuration: Browser.Configuration,
        resolver: @escaping Resolver = { try await DNSServiceResolution.resolve($0, timeout: $1) },
        addressQuery: @escaping AddressQuery = {
            try await DNSServiceAddressQuery.addresses(of: $0, port: $1, timeout: $2)
        }
    ) {
        self.peer = peer
        self.ownInstanceName = DiscoveryRecord.instanceName(for: peer)
        self.registrationType = DiscoveryRecord.registrationType(serviceType)
        self.configuration = configuration
        self.resolver = resolver
        self.addressQuery = addressQuery
        self.eventLoop = PeerEventLoop.loop(for: peer, in: configuration.ioGroup)
    }

    /// A new subscriber of ``events``, and the peers found at that moment.
    ///
    /// - Parameter replaying: whether the subscriber starts with a `.found` for each of them.
    /// - Returns: its id, and the found peers with their discoveryInfo.
    func subscribe(replayingFoundPeers replaying: Bool) -> (id: Int, found: [PeerID: [String: String]]) {
        state.withLock { state in
            let found = state.machine.foundPeers
            let initial = replaying ? found.map { BrowserEvent.found($0.key, discoveryInfo: $0.value) } : []
            return (events.subscribe(claimsEarlyEvents: false, replaying: initial), found)
        }
    }

    /// Browsing failed (avahi-daemon went away): resolves and retries stop, and every subscriber gets the
    /// events queued for it, then `error`, once.
    func fail(_ error: DiscoveryError) {
        let later = state.withLock { state -> [() -> Void] in
            guard state.failure == nil else { return [] }
            state.failure = error
            let later = run(state.machine.stop(), in: &state)
            events.finish()
            return later
        }
        for work in later { work() }
    }

    /// Why browsing failed, once it has.
    var failure: DiscoveryError? {
        state.withLock { $0.failure }
    }

    func start() throws(DiscoveryError) {
        try state.withLock { state throws(DiscoveryError) in
            switch state.phase {
            case .idle: break
            case .started: return
            case .stopped: throw DiscoveryError.notRestartable
            }
            do {
                let browse = try DNSServiceBrowse.start(type: registrationType) { [weak self] event in
                    self?.handle(event)
                }
                state.phase = .started(browse)
            } catch let failure as DNSServiceFailure {
                throw failure.isDaemonNotRunning ? DiscoveryError.daemonNotRunning : .dnsServiceFailed("\(failure)")
            } catch {
                throw .dnsServiceFailed("\(error)")
            }
        }
    }

    func stop() {
        let (phase, later) = state.withLock { state in
            let phase = state.phase
            state.phase = .stopped
            var later = run(state.machine.stop(), in: &state)
            // Nothing should be left; whatever is, goes too.
            let tasks = state.resolves.values.map(\.task)
            let timers = state.retries.values.map(\.timer)
            state.resolves = [:]
            state.retries = [:]
            later.append {
                for task in tasks { task.cancel() }
                for timer in timers { timer.cancel() }
            }
            events.finish()
            return (phase, later)
        }
        if case .started(let browse) = phase { browse.cancel() }
        for work in later { work() }
    }

    var foundPeers: [PeerID: [String: String]] {
        state.withLock { $0.machine.foundPeers }
    }

    /// Where to connect to a found peer: 127.0.0.1 when Avahi reports its service on the loopback
    /// interface (it runs on this host, and loopback is the shortest way), else its host name.
    func endpoint(of peer: PeerID) -> (host: String, port: Int)? {
        state.withLock { state in
            guard let found = state.machine.endpoint(of: peer) else { return nil }
            if let loopback = LoopbackInterface.index, found.interfaces.contains(loopback) {
                return (LoopbackInterface.address, found.port)
            }
            return (found.host, found.port)
        }
    }

    /// Where to dial a found peer: 127.0.0.1 when its service shows on the loopback interface; else its
    /// host's addresses from DNS-SD's A and AAAA records (loopback ones left out: they reach this host),
    /// which need no nss-mdns; else, when none comes within ``addressTimeout``, its host name for the
    /// system resolver.
    ///
    /// - Parameter peer: a found peer.
    /// - Returns: the target, or nil when the peer is not found.
    func dialTarget(of peer: PeerID) async -> DialTarget? {
        guard let endpoint = endpoint(of: peer) else { return nil }
        let target = DialTarget(host: endpoint.host, port: endpoint.port)
        guard endpoint.host != LoopbackInterface.address else { return target }
        let found: [SocketAddress]
        do {
            found = try await addressQuery(endpoint.host, endpoint.port, Self.addressTimeout)
        } catch {
            configuration.logger.debug("cannot query the addresses of \(LogSafe.escaped(endpoint.host)): \(error)")
            found = []
        }
        let addresses = found.filter { !IPAddressText.isLoopback(Platform.addressText($0) ?? "") }
        if addresses.isEmpty {
            configuration.logger.debug(
                "DNS-SD gave no address for \(LogSafe.escaped(endpoint.host)): asking the system resolver"
            )
        }
        return DialTarget(host: endpoint.host, port: endpoint.port, addresses: addresses)
    }

    /// A dial to a found peer at ``endpoint(of:)`` was refused or timed out: its service is resolved again,
    /// and a new host or port replaces the old one (without lost and found) when the resolve gives one.
    ///
    /// - Parameter peer: a found peer; nothing happens for another, or while its re-resolve is under way.
    func endpointStale(_ peer: PeerID) {
        let (acted, later) = state.withLock { state in
            let actions = state.machine.endpointStale(peer: peer)
            return (!actions.isEmpty, run(actions, in: &state))
        }
        if acted {
            configuration.logger.debug("resolving \(peer) again: a connection to its address failed")
        }
        for work in later { work() }
    }

    private func handle(_ event: DNSServiceBrowse.Event) {
        switch event {
        case .added(let instance):
            guard instance.name != ownInstanceName else { return }
            let later = state.withLock { state in run(state.machine.added(instance), in: &state) }
            for work in later { work() }
        case .removed(let instance):
            let later = state.withLock { state in run(state.machine.removed(instance), in: &state) }
            for work in later { work() }
        case .failed(let failure):
            configuration.logger.error("browsing \(registrationType) failed: \(failure)")
            fail(failure.isDaemonNotRunning ? .daemonNotRunning : .dnsServiceFailed("\(failure)"))
        }
    }

    /// One resolve, from start to outcome: the record is checked here, outside the lock, then the machine
    /// decides.
    private func resolve(_ instance: DNSServiceInstance, generation: UInt64) async {
        enum Outcome {
            case resolved(Machine.Resolved)
            case rejected(txtLength: Int)
            case failed(any Error)
        }
        let outcome: Outcome
        do {
            let resolved = try await resolver(instance, configuration.resolveTimeout)
            if let record = DiscoveryRecord(txtRecord: resolved.txtRecord), record.peer != peer {
                var host = resolved.hostTarget
                if host.hasSuffix(".") { host.removeLast() }
                outcome = .resolved(Machine.Resolved(record: record, host: host, port: Int(resolved.port)))
            } else {
                outcome = .rejected(txtLength: resolved.txtRecord.count)
            }
        } catch {
            outcome = .failed(error)
        }
        let name = instance.name
        let (acted, later) = state.withLock { state -> (Bool, [() -> Void]) in
            if state.resolves[name]?.generation == generation { state.resolves[name] = nil }
            let actions =
                switch outcome {
                case .resolved(let resolved): state.machine.resolved(name: name, generation: generation, resolved)
                case .rejected: state.machine.recordRejected(name: name, generation: generation)
                case .failed: state.machine.resolveFailed(name: name, generation: generation)
                }
            return (!actions.isEmpty, run(actions, in: &state))
        }
        // An outcome the machine no longer waited for (a cancelled or superseded resolve) leaves no trace.
        guard acted else { return }
        switch outcome {
        case .resolved: break
        case .rejected(let length):
            configuration.logger.warning(
                "ignoring service \"\(LogSafe.escaped(name))\": its TXT record (\(length) bytes) does not name a valid peer, or is over \(DiscoveryRecord.maximumReceivedTXTLength) bytes"
            )
        case .failed(let error):
            configuration.logger.debug(
                "cannot resolve service \"\(LogSafe.escaped(name))\" (\(registrationType)) on interface \(instance.interfaceIndex): \(error)"
            )
        }
        for work in later { work() }
    }

    /// The retry timer `generation` of the instance named fired (on the event loop).
    private func retryTimerFired(name: String, generation: UInt64) {
        let later = state.withLock { state -> [() -> Void] in
            if state.retries[name]?.generation == generation { state.retries[name] = nil }
            return run(state.machine.retryTimerFired(name: name, generation: generation), in: &state)
        }
        for work in later { work() }
    }

    /// Carries out the machine's actions, with the lock held: events are yielded and tasks and timers
    /// started and recorded here; cancellations and log lines are returned, to be run once it is released.
    private func run(_ actions: [Machine.Action], in state: inout State) -> [() -> Void] {
        var later: [() -> Void] = []
        let logger = configuration.logger
        for action in actions {
            switch action {
            case .resolve(let instance, let generation):
                let task = Task { await self.resolve(instance, generation: generation) }
                if let old = state.resolves.updateValue((generation, task), forKey: instance.name) {
                    later.append { old.task.cancel() }
                }
            case .cancelResolve(let name):
                if let old = state.resolves.removeValue(forKey: name) { later.append { old.task.cancel() } }
            case .scheduleRetry(let name, let delay, let generation, let failures):
                let timer = eventLoop.scheduleTask(in: TimeAmount(delay)) { [weak self] () -> Void in
                    guard let self else { return }
                    self.retryTimerFired(name: name, generation: generation)
                }
                if let old = state.retries.updateValue((generation, timer), forKey: name) {
                    later.append { old.timer.cancel() }
                }
                later.append {
                    logger.debug(
                        "resolving service \"\(LogSafe.escaped(name))\" again in \(delay) (\(failures) failed in a row)"
                    )
                }
            case .cancelRetry(let name):
                if let old = state.retries.removeValue(forKey: name) { later.append { old.timer.cancel() } }
            case .yieldFound(let record):
                events.yield(.found(record.peer, discoveryInfo: record.discoveryInfo))
            case .yieldLost(let peer):
                events.yield(.lost(peer))
            case .endpointChanged(let name, let host, let port):
                later.append {
                    logger.debug(
                        "service \"\(LogSafe.escaped(name))\" moved to \(LogSafe.escaped(host)):\(port)"
                    )
                }
            case .stillUnresolved(let name, let failures):
                let type = registrationType
                later.append {
                    logger.warning(
                        "cannot resolve service \"\(LogSafe.escaped(name))\" (\(type)): \(failures) attempts failed; trying again every few seconds while it is present"
                    )
                }
            case .ignore:
                break  // logged by the resolve, which knows the record
            }
        }
        return later
    }
}
