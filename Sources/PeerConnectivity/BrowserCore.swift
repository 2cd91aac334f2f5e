import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The state behind a ``Browser``: counts the interfaces each service is seen on (Avahi reports one
/// ADD per interface and IP version), resolves each service once, and reports found / lost per peer.
///
/// Events are yielded into ``events`` while the lock is held, so that a subscriber's snapshot of the
/// found peers (taken under the same lock) and the events after it fit together exactly.
final class BrowserCore: Sendable {
    private enum Phase {
        case idle
        case started(DNSServiceBrowse)
        case stopped
    }

    private struct Found {
        var record: DiscoveryRecord
        var host: String
        var port: Int
    }

    private struct State {
        var phase = Phase.idle
        /// Per instance name and interface: how many ADDs (one per IP version) are not yet removed.
        var sightings: [String: [UInt32: Int]] = [:]
        var resolving: [String: Task<Void, Never>] = [:]
        var found: [String: Found] = [:]
        /// Why browsing ended, when it failed.
        var failure: DiscoveryError?

        var foundPeers: [PeerID: [String: String]] {
            Dictionary(
                found.values.map { ($0.record.peer, $0.record.discoveryInfo) },
                uniquingKeysWith: { a, _ in a }
            )
        }
    }

    private let peer: PeerID
    private let ownInstanceName: String
    private let registrationType: String
    private let configuration: Browser.Configuration
    private let state = Mutex(State())
    /// Found and lost peers for every subscriber (``Browser/Events``); nothing is kept for later ones:
    /// each starts from a snapshot instead.
    let events = EventHub<BrowserEvent>(keepsEarlyEvents: false)

    init(peer: PeerID, serviceType: String, configuration: Browser.Configuration) {
        self.peer = peer
        self.ownInstanceName = DiscoveryRecord.instanceName(for: peer)
        self.registrationType = DiscoveryRecord.registrationType(serviceType)
        self.configuration = configuration
    }

    /// A new subscriber of ``events``, and the peers found at that moment.
    ///
    /// - Parameter replaying: whether the subscriber starts with a `.found` for each of them.
    /// - Returns: its id, and the found peers with their discoveryInfo.
    func subscribe(replayingFoundPeers replaying: Bool) -> (id: Int, found: [PeerID: [String: String]]) {
        state.withLock { state in
            let found = state.foundPeers
            let initial = replaying ? found.map { BrowserEvent.found($0.key, discoveryInfo: $0.value) } : []
            return (events.subscribe(claimsEarlyEvents: false, replaying: initial), found)
        }
    }

    /// Browsing failed (avahi-daemon went away): every subscriber gets the events queued for it, then
    /// `error`, once.
    func fail(_ error: DiscoveryError) {
        state.withLock { state in
            guard state.failure == nil else { return }
            state.failure = error
            events.finish()
        }
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
        let (phase, tasks) = state.withLock { state in
            let result = (state.phase, Array(state.resolving.values))
            state.phase = .stopped
            state.resolving = [:]
            state.found = [:]
            state.sightings = [:]
            events.finish()
            return result
        }
        if case .started(let browse) = phase { browse.cancel() }
        for task in tasks { task.cancel() }
    }

    var foundPeers: [PeerID: [String: String]] {
        state.withLock { $0.foundPeers }
    }

    /// Where to connect to a found peer: 127.0.0.1 when Avahi reports its service on the loopback
    /// interface (it runs on this host, and loopback is the shortest way), else its host name.
    func endpoint(of peer: PeerID) -> (host: String, port: Int)? {
        state.withLock { state in
            guard let (name, found) = state.found.first(where: { $0.value.record.peer == peer }) else { return nil }
            if let loopback = LoopbackInterface.index, state.sightings[name]?[loopback] != nil {
                return (LoopbackInterface.address, found.port)
            }
            return (found.host, found.port)
        }
    }

    private func handle(_ event: DNSServiceBrowse.Event) {
        switch event {
        case .added(let instance):
            guard instance.name != ownInstanceName else { return }
            state.withLock { state in
                guard case .started = state.phase else { return }
                let firstSighting = state.sightings[instance.name] == nil
                state.sightings[instance.name, default: [:]][instance.interfaceIndex, default: 0] += 1
                guard firstSighting, state.found[instance.name] == nil, state.resolving[instance.name] == nil else {
                    return
                }
                state.resolving[instance.name] = Task { await self.resolve(instance) }
            }
        case .removed(let instance):
            state.withLock { state in
                guard var interfaces = state.sightings[instance.name], let seen = interfaces[instance.interfaceIndex]
                else { return }
                interfaces[instance.interfaceIndex] = seen > 1 ? seen - 1 : nil
                guard interfaces.isEmpty else {
                    state.sightings[instance.name] = interfaces
                    return
                }
                state.sightings[instance.name] = nil
                state.resolving.removeValue(forKey: instance.name)?.cancel()
                if let lost = state.found.removeValue(forKey: instance.name)?.record {
                    events.yield(.lost(lost.peer))
                }
            }
        case .failed(let failure):
            configuration.logger.error("browsing \(registrationType) failed: \(failure)")
            fail(failure.isDaemonNotRunning ? .daemonNotRunning : .dnsServiceFailed("\(failure)"))
        }
    }

    private func resolve(_ instance: DNSServiceInstance) async {
        let resolved: ResolvedService
        do {
            resolved = try await DNSServiceResolution.resolve(instance, timeout: configuration.resolveTimeout)
        } catch {
            state.withLock { _ = $0.resolving.removeValue(forKey: instance.name) }
            if !Task.isCancelled {
                configuration.logger.warning(
                    "cannot resolve service \(LogSafe.escaped(instance.name)) (\(registrationType)): \(error)"
                )
            }
            return
        }
        guard let record = DiscoveryRecord(txtRecord: resolved.txtRecord), record.peer != peer else {
            state.withLock { _ = $0.resolving.removeValue(forKey: instance.name) }
            configuration.logger.warning(
                "ignoring service \"\(LogSafe.escaped(instance.name))\": its TXT record (\(resolved.txtRecord.count) bytes) does not name a valid peer, or is over \(DiscoveryRecord.maximumReceivedTXTLength) bytes"
            )
            return
        }
        var host = resolved.hostTarget
        if host.hasSuffix(".") { host.removeLast() }
        let found = Found(record: record, host: host, port: Int(resolved.port))
        state.withLock { state in
            state.resolving[instance.name] = nil
            guard case .started = state.phase, state.sightings[instance.name] != nil else { return }
            state.found[instance.name] = found
            events.yield(.found(record.peer, discoveryInfo: record.discoveryInfo))
        }
    }
}
