import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A host's addresses from its A and AAAA records through the real avahi-daemon (`DNSServiceQueryRecord`).
@Suite("Addresses from DNS-SD", .avahiTimeLimit)
struct AddressQueryTests {
    @Test("the host a resolve names has addresses, each with the service's port", .avahi)
    func hostOfAResolvedService() async throws {
        let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let type = "_pc\(token.prefix(12))._tcp"
        let loopback = if_nametoindex("lo")
        let registration = try await DNSServiceRegistration.register(
            name: "address query \(token)",
            type: type,
            port: 4242,
            txtRecord: try TXTRecord.encode(["id": token]),
            interfaceIndex: loopback,
            onFailure: { failure in Issue.record("registration failed after success: \(failure)") }
        )
        defer { registration.cancel() }
        let instance = DNSServiceInstance(
            name: "address query \(token)",
            type: type + ".",
            domain: "local.",
            interfaceIndex: loopback
        )
        let resolved = try await DNSServiceResolution.resolve(instance, timeout: promptly)
        let start = ContinuousClock.now
        let addresses = try await DNSServiceAddressQuery.addresses(
            of: resolved.hostTarget,
            port: Int(resolved.port),
            timeout: waitLimit
        )
        let elapsed = ContinuousClock.now - start
        #expect(!addresses.isEmpty, "no A or AAAA record for \(resolved.hostTarget)")
        #expect(addresses.allSatisfy { $0.port == 4242 })
        #expect(Set(addresses).count == addresses.count, "each address once")
        // The daemon knows its own host's records: no wait for the timeout (``waitLimit``, twice this).
        #expect(elapsed < promptly, "took \(elapsed)")
    }

    @Test("a host nobody answers for gives no address at the timeout, not an error", .avahi)
    func unknownHost() async throws {
        let name = "nobody-\(UInt64.random(in: 0...UInt64.max)).local."
        let start = ContinuousClock.now
        let addresses = try await DNSServiceAddressQuery.addresses(of: name, port: 1, timeout: .milliseconds(400))
        #expect(addresses.isEmpty)
        #expect(ContinuousClock.now - start >= .milliseconds(400))
    }
}
