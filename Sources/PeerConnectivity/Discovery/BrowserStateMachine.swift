import PeerConnectivityCore
import PeerConnectivityTransport

/// The decisions of a ``Browser``: which service instances to resolve and when to try again, and when a
/// peer is found, changed or lost. Pure: no I/O, no clock, no lock. `BrowserRuntime` holds it in a `Mutex`,
/// feeds it DNS-SD events, resolve outcomes and timer firings, and carries out the ``Action``s it returns.
///
/// The rules:
/// - Avahi reports one ADD per interface and IP version. The first ADD of an instance starts a resolve on
///   that interface; later ones only count, except the first on a new interface while the instance waits
///   for a retry: that resolves at once on the new interface (the backoff is cut short).
/// - A failed or timed-out resolve is retried after ``ResolveBackoff``'s delay (0.5 s doubling to 8 s,
///   with jitter) for as long as the instance is sighted, each time on the next interface it is seen on.
/// - The last REMOVE of an instance forgets it: its resolve or retry is cancelled, and a found peer is lost.
/// - A found peer whose address proved stale (a dial to it was refused or timed out) is resolved once
///   more (``endpointStale(peer:)``); a new host or port replaces the old one without lost and found,
///   which come only when the TXT record itself changed.
/// - A TXT record that names no valid peer (or this one) is ignored until the instance is removed.
/// - Every resolve and retry timer has a generation; an outcome or firing of any other generation than
///   the one the instance waits for (a cancelled resolve, a timer that fired late) changes nothing.
struct BrowserStateMachine<Random: RandomNumberGenerator> {
    /// What a resolve found and the browser checked: the peer's record and where it listens.
    struct Resolved {
        /// The peer and its discoveryInfo, from the TXT record.
        var record: DiscoveryRecord
        /// The host name from the SRV record, without the trailing dot.
        var host: String
        /// The port from the SRV record.
        var port: Int
    }

    /// What the browser does next.
    enum Action {
        /// Resolve `instance`; report its outcome with `generation`.
        case resolve(DNSServiceInstance, generation: UInt64)
        /// Cancel the resolve under way for the instance named.
        case cancelResolve(name: String)
        /// Fire ``retryTimerFired(name:generation:)`` after `delay`; `failures` in a row so far.
        case scheduleRetry(name: String, delay: Duration, generation: UInt64, failures: Int)
        /// Cancel the retry timer of the instance named.
        case cancelRetry(name: String)
        /// Report the peer found.
        case yieldFound(DiscoveryRecord)
        /// Report the peer lost.
        case yieldLost(PeerID)
        /// A re-resolve gave a found peer a new host or port (for the log; nothing to report).
        case endpointChanged(name: String, host: String, port: Int)
        /// The instance has failed to resolve `failures` times in a row, and is still tried (for the log).
        case stillUnresolved(name: String, failures: Int)
        /// The instance's TXT record names no valid peer: ignored until it is removed (for the log).
        case ignore(name: String)
    }

    private enum Resolution {
        /// A resolve is under way; `failures` attempts failed before it.
        case resolving(generation: UInt64, failures: Int)
        /// The retry timer `generation` is pending.
        case waiting(generation: UInt64, failures: Int)
        /// Resolved; `reresolving` is the generation of a resolve of its stale address under way.
        case found(Resolved, reresolving: UInt64?)
        /// Its TXT record names no valid peer.
        case ignored
    }

    private struct Sighted {
        /// Per interface: the ADDs not yet removed (one per IP version), and the instance as reported there.
        var interfaces: [UInt32: (adds: Int, instance: DNSServiceInstance)]
        var resolution: Resolution
        /// The interface of the last resolve, so that the next one tries another.
        var lastInterface: UInt32

        /// The instance on the interface after the last one tried (in index order, wrapping round), so
        /// that attempts go round every interface the instance is seen on.
        func nextInstance() -> DNSServiceInstance {
            let indices = interfaces.keys.sorted()
            let index = indices.first(where: { $0 > lastInterface }) ?? indices[0]
            return interfaces[index]!.instance
        }
    }

    private var sighted: [String: Sighted] = [:]
    private var lastGeneration: UInt64 = 0
    private var stopped = false
    private let backoff: ResolveBackoff
    private var random: Random

    /// A machine that has seen nothing.
    ///
    /// - Parameters:
    ///   - backoff: the delays between attempts.
    ///   - random: where the jitter comes from.
    init(backoff: ResolveBackoff = .standard, random: Random) {
        self.backoff = backoff
        self.random = random
    }

    /// The peers found and not lost, with their discoveryInfo.
    var foundPeers: [PeerID: [String: String]] {
        var peers: [PeerID: [String: String]] = [:]
        for entry in sighted.values {
            guard case .found(let resolved, _) = entry.resolution else { continue }
            if peers[resolved.record.peer] == nil {
                peers[resolved.record.peer] = resolved.record.discoveryInfo
            }
        }
        return peers
    }

    /// Where a found peer was resolved to, and the interfaces its service is seen on.
    ///
    /// - Parameter peer: a found peer.
    /// - Returns: nil when it is not found.
    func endpoint(of peer: PeerID) -> (host: String, port: Int, interfaces: Set<UInt32>)? {
        for entry in sighted.values {
            guard case .found(let resolved, _) = entry.resolution, resolved.record.peer == peer else { continue }
            return (resolved.host, resolved.port, Set(entry.interfaces.keys))
        }
        return nil
    }

    /// DNS-SD reported `instance` on one interface and IP version.
    mutating func added(_ instance: DNSServiceInstance) -> [Action] {
        guard !stopped else { return [] }
        let name = instance.name
        guard var entry = sighted[name] else {
            let generation = nextGeneration()
            sighted[name] = Sighted(
                interfaces: [instance.interfaceIndex: (1, instance)],
                resolution: .resolving(generation: generation, failures: 0),
                lastInterface: instance.interfaceIndex
            )
            return [.resolve(instance, generation: generation)]
        }
        let newInterface = entry.interfaces[instance.interfaceIndex] == nil
        entry.interfaces[instance.interfaceIndex, default: (0, instance)].adds += 1
        var actions: [Action] = []
        if newInterface, case .waiting(_, let failures) = entry.resolution {
            let generation = nextGeneration()
            entry.resolution = .resolving(generation: generation, failures: failures)
            entry.lastInterface = instance.interfaceIndex
            actions = [.cancelRetry(name: name), .resolve(instance, generation: generation)]
        }
        sighted[name] = entry
        return actions
    }

    /// DNS-SD reported `instance` gone from one interface and IP version.
    mutating func removed(_ instance: DNSServiceInstance) -> [Action] {
        let name = instance.name
        guard !stopped, var entry = sighted[name], let seen = entry.interfaces[instance.interfaceIndex] else {
            return []
        }
        entry.interfaces[instance.interfaceIndex] = seen.adds > 1 ? (seen.adds - 1, seen.instance) : nil
        guard entry.interfaces.isEmpty else {
            sighted[name] = entry
            return []
        }
        sighted[name] = nil
        switch entry.resolution {
        case .resolving: return [.cancelResolve(name: name)]
        case .waiting: return [.cancelRetry(name: name)]
        case .found(let resolved, let reresolving):
            return (reresolving == nil ? [] : [.cancelResolve(name: name)]) + [.yieldLost(resolved.record.peer)]
        case .ignored: return []
        }
    }

    /// The resolve `generation` of the instance named gave a valid record.
    mutating func resolved(name: String, generation: UInt64, _ resolved: Resolved) -> [Action] {
        guard var entry = sighted[name] else { return [] }
        switch entry.resolution {
        case .resolving(generation, _):
            entry.resolution = .found(resolved, reresolving: nil)
            sighted[name] = entry
            return [.yieldFound(resolved.record)]
        case .found(let old, generation):
            entry.resolution = .found(resolved, reresolving: nil)
            sighted[name] = entry
            guard old.record.isSameAdvertisement(as: resolved.record) else {
                return [.yieldLost(old.record.peer), .yieldFound(resolved.record)]
            }
            guard old.host != resolved.host || old.port != resolved.port else { return [] }
            return [.endpointChanged(name: name, host: resolved.host, port: resolved.port)]
        default:
            return []
        }
    }

    /// The resolve `generation` of the instance named failed or timed out.
    mutating func resolveFailed(name: String, generation: UInt64) -> [Action] {
        guard var entry = sighted[name] else { return [] }
        switch entry.resolution {
        case .resolving(generation, let failures):
            let failures = failures + 1
            let timer = nextGeneration()
            entry.resolution = .waiting(generation: timer, failures: failures)
            sighted[name] = entry
            let delay = backoff.delay(afterFailures: failures, random: Double.random(in: 0..<1, using: &random))
            let retry = Action.scheduleRetry(name: name, delay: delay, generation: timer, failures: failures)
            guard failures == backoff.warningAfterFailures else { return [retry] }
            return [retry, .stillUnresolved(name: name, failures: failures)]
        case .found(let resolved, generation):
            // The old address stays; the dial that found it stale may be tried again, or DNS-SD says it is gone.
            entry.resolution = .found(resolved, reresolving: nil)
            sighted[name] = entry
            return []
        default:
            return []
        }
    }

    /// The resolve `generation` of the instance named gave a TXT record that names no valid peer, or this one.
    mutating func recordRejected(name: String, generation: UInt64) -> [Action] {
        guard var entry = sighted[name] else { return [] }
        switch entry.resolution {
        case .resolving(generation, _):
            entry.resolution = .ignored
            sighted[name] = entry
            return [.ignore(name: name)]
        case .found(let old, generation):
            entry.resolution = .ignored
            sighted[name] = entry
            return [.yieldLost(old.record.peer), .ignore(name: name)]
        default:
            return []
        }
    }

    /// The retry timer `generation` of the instance named fired.
    mutating func retryTimerFired(name: String, generation: UInt64) -> [Action] {
        guard var entry = sighted[name], case .waiting(generation, let failures) = entry.resolution else { return [] }
        let instance = entry.nextInstance()
        let resolve = nextGeneration()
        entry.resolution = .resolving(generation: resolve, failures: failures)
        entry.lastInterface = instance.interfaceIndex
        sighted[name] = entry
        return [.resolve(instance, generation: resolve)]
    }

    /// A dial to `peer` at its found address was refused or timed out: resolve it again, unless that is
    /// already under way.
    mutating func endpointStale(peer: PeerID) -> [Action] {
        for (name, var entry) in sighted {
            guard case .found(let resolved, nil) = entry.resolution, resolved.record.peer == peer else { continue }
            let instance = entry.nextInstance()
            let generation = nextGeneration()
            entry.resolution = .found(resolved, reresolving: generation)
            entry.lastInterface = instance.interfaceIndex
            sighted[name] = entry
            return [.resolve(instance, generation: generation)]
        }
        return []
    }

    /// The browser stops: every resolve and timer is cancelled, everything is forgotten, and later events
    /// change nothing.
    mutating func stop() -> [Action] {
        stopped = true
        let actions = sighted.flatMap { name, entry -> [Action] in
            switch entry.resolution {
            case .resolving, .found(_, .some): [.cancelResolve(name: name)]
            case .waiting: [.cancelRetry(name: name)]
            case .found(_, nil), .ignored: []
            }
        }
        sighted = [:]
        return actions
    }

    private mutating func nextGeneration() -> UInt64 {
        lastGeneration += 1
        return lastGeneration
    }
}

extension DiscoveryRecord {
    /// Whether two records say the same: the same peer, display name and discoveryInfo.
    fileprivate func isSameAdvertisement(as other: DiscoveryRecord) -> Bool {
        peer == other.peer && peer.displayName == other.peer.displayName && discoveryInfo == other.discoveryInfo
    }
}
