import NIOCore
import PeerConnectivity
import PeerConnectivityTransport
import Synchronization

/// Where to reach a reflector found by DNS-SD on a port other than its session's (the raw echo port):
/// 127.0.0.1 when Avahi sees its service on the loopback interface (it runs on this host), else an IPv4
/// address of the host its service resolves to, from DNS-SD's own A records (no nss-mdns needed), or that
/// host's name when DNS-SD gives none (the system resolver, through nss-mdns, then).
///
/// `Browser` knows this but does not say it (it keeps the address to itself); until it does, this
/// browses again with the transport's DNS-SD wrapper, which Avahi answers from its cache at once.
enum ReflectorAddress {
    /// How long to wait for a sighting on the loopback interface once the service is seen elsewhere.
    static let loopbackGrace: Duration = .milliseconds(300)
    /// How long to wait for the host's A records from DNS-SD before falling back to its name.
    static let addressTimeout: Duration = .milliseconds(1500)

    /// The host name or address of a reflector's service.
    ///
    /// - Parameters:
    ///   - peer: the reflector, as the browser found it.
    ///   - serviceType: its service type ("p2p-bench").
    ///   - timeout: how long to look.
    /// - Throws: ``BenchError/reflectorNotFound(_:)`` when its service is not seen or resolved in time.
    static func host(of peer: PeerID, serviceType: String, timeout: Duration) async throws -> String {
        let instanceName = peer.id.uuidString.lowercased()
        let sightings = Sightings()
        let browse = try DNSServiceBrowse.start(type: "_\(serviceType)._tcp") { event in
            if case .added(let instance) = event, instance.name == instanceName {
                sightings.list.withLock { $0.append(instance) }
            }
        }
        defer { browse.cancel() }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var firstSeen: ContinuousClock.Instant?
        while clock.now < deadline {
            let seen = sightings.list.withLock { $0 }
            if let loopback = LoopbackInterface.index, seen.contains(where: { $0.interfaceIndex == loopback }) {
                return LoopbackInterface.address
            }
            if let first = seen.first {
                if firstSeen == nil { firstSeen = clock.now }
                if let firstSeen, clock.now - firstSeen >= loopbackGrace {
                    let resolved = try await DNSServiceResolution.resolve(first, timeout: deadline - clock.now)
                    // The raw echo port listens on IPv4 only.
                    let addresses = try? await DNSServiceAddressQuery.addresses(
                        of: resolved.hostTarget,
                        port: 0,
                        timeout: addressTimeout
                    )
                    if let address = addresses?.first(where: \.isIPv4)?.ipAddress { return address }
                    var host = resolved.hostTarget
                    if host.hasSuffix(".") { host.removeLast() }
                    return host
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError.reflectorNotFound("the service of \(peer.displayName) was not resolved within \(timeout)")
    }
}

/// The instances seen so far, filled on the browse's DNS-SD thread.
private final class Sightings: Sendable {
    let list = Mutex<[DNSServiceInstance]>([])
}

extension SocketAddress {
    /// Whether this is an IPv4 address.
    fileprivate var isIPv4: Bool {
        if case .v4 = self { return true }
        return false
    }
}
