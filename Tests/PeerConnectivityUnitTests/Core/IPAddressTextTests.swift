import PeerConnectivityCore
import Testing

@Suite("Addresses in text: the forms that name one host made one")
struct IPAddressTextTests {
    @Test(
        "an IPv4-mapped IPv6 address becomes its IPv4 address; everything else stays",
        arguments: [
            ("::ffff:10.0.0.1", "10.0.0.1"),
            ("::FFFF:192.0.2.7", "192.0.2.7"),
            ("0:0:0:0:0:ffff:127.0.0.1", "127.0.0.1"),
            ("10.0.0.1", "10.0.0.1"),
            ("::1", "::1"),
            ("fe80::1%eth0", "fe80::1%eth0"),
            ("fd00::2", "fd00::2"),
            ("::ffff:10.0.0", "::ffff:10.0.0"),
            ("::ffff:10.0.0.256", "::ffff:10.0.0.256"),
            ("::ffff:+1.0.0.1", "::ffff:+1.0.0.1"),
            ("::ffff:1", "::ffff:1"),
        ]
    )
    func normalized(text: String, expected: String) {
        #expect(IPAddressText.normalized(text) == expected)
    }

    @Test("loopback addresses, mapped or not")
    func loopback() {
        for address in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"] {
            #expect(IPAddressText.isLoopback(address), "\(address)")
        }
        for address in ["10.0.0.1", "::", "fe80::1%lo", "::ffff:10.0.0.1", "128.0.0.1", "fd00::1"] {
            #expect(!IPAddressText.isLoopback(address), "\(address)")
        }
    }

    @Test("link-local IPv6 is fe80::/10, with or without a scope")
    func linkLocal() {
        for address in ["fe80::1", "fe80::fc:ff:fe00:1%eth0", "FEBF::1", "fe80::"] {
            #expect(IPAddressText.isLinkLocal(address), "\(address)")
        }
        for address in ["fec0::1", "fd00::1", "10.0.0.1", "::1", "fe8::1", ""] {
            #expect(!IPAddressText.isLinkLocal(address), "\(address)")
        }
        #expect(IPAddressText.withoutScope("fe80::1%eth0") == "fe80::1")
        #expect(IPAddressText.withoutScope("10.0.0.1") == "10.0.0.1")
    }

    @Test("the handshake limit per address counts a mapped and a plain IPv4 address as one host")
    func admissionCountsMappedAsIPv4() {
        var admission = HandshakeAdmission(limits: .init(maximum: 10, maximumPerAddress: 2))
        #expect(admission.arrived(1, from: "10.0.0.1") == nil)
        #expect(admission.arrived(2, from: "::ffff:10.0.0.1") == nil)
        #expect(admission.count(from: "10.0.0.1") == 2)
        #expect(admission.count(from: "::ffff:10.0.0.1") == 2)
        // The third from that host, in either form, pushes out its oldest, not another host's.
        #expect(admission.arrived(3, from: "10.0.0.2") == nil)
        #expect(admission.arrived(4, from: "::ffff:10.0.0.1") == 1)
    }

    @Test("the invitation rate limit per address counts a mapped and a plain IPv4 address as one host")
    func rateLimiterCountsMappedAsIPv4() {
        var limiter = InvitationRateLimiter(
            limits: .init(pendingPerPeer: 10, peerBurst: 10, peerPerSecond: 0, addressBurst: 2, addressPerSecond: 0)
        )
        #expect(limiter.request(peer: "a", address: "10.0.0.1", now: 0) == .admit)
        #expect(limiter.request(peer: "b", address: "::ffff:10.0.0.1", now: 0) == .admit)
        #expect(limiter.request(peer: "c", address: "::ffff:10.0.0.1", now: 0) != .admit)
        #expect(limiter.request(peer: "d", address: "10.0.0.1", now: 0) != .admit)
        #expect(limiter.request(peer: "e", address: "10.0.0.2", now: 0) == .admit)
    }

    @Test("a host and port are written with brackets around an IPv6 address and only then")
    func hostPortBracketsIPv6() {
        #expect(IPAddressText.hostPort("192.0.2.7", 7100) == "192.0.2.7:7100")
        #expect(IPAddressText.hostPort("peer.local", 7100) == "peer.local:7100")
        #expect(IPAddressText.hostPort("::1", 7100) == "[::1]:7100")
        #expect(IPAddressText.hostPort("fe80::1%eth0", 80) == "[fe80::1%eth0]:80")
    }
}
