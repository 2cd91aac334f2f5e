import PeerConnectivityCore
import Testing

/// Which source addresses the per-address limits count as one.
@Suite("What a per-address limit counts an address as")
struct AdmissionKeyTests {
    static func key(_ address: String, prefix: Int = AdmissionKey.defaultIPv6PrefixLength) -> String {
        AdmissionKey(address: address, ipv6PrefixLength: prefix).description
    }

    @Test("IPv4 counts as it is; an IPv4-mapped IPv6 address, in any form, as its IPv4 address")
    func ipv4() {
        #expect(Self.key("192.0.2.7") == "192.0.2.7")
        #expect(Self.key("::ffff:192.0.2.7") == "192.0.2.7")
        #expect(Self.key("0:0:0:0:0:ffff:192.0.2.7") == "192.0.2.7")
        #expect(Self.key("::FFFF:c000:0207") == "192.0.2.7")
        #expect(Self.key("127.0.0.1") == "127.0.0.1")
        #expect(Self.key("192.0.2.7") != Self.key("192.0.2.8"))
    }

    @Test("a global IPv6 address counts as its /64: every address of one network is one source")
    func globalIPv6ByNetwork() {
        #expect(Self.key("fd00:1::1") == "fd00:1::/64")
        #expect(Self.key("fd00:1::28") == "fd00:1::/64")
        #expect(Self.key("FD00:0001:0000:0000:abcd:ef01:2345:6789") == "fd00:1::/64")
        #expect(Self.key("2001:db8:aa:bb:1:2:3:4") == "2001:db8:aa:bb::/64")
        #expect(Self.key("fd00:2::1") != Self.key("fd00:1::1"))
        #expect(Self.key("2001:db8:aa:bc::1") != Self.key("2001:db8:aa:bb::1"))
    }

    @Test("the prefix length is a setting: 48 joins networks, 128 counts each address, odd lengths cut bits")
    func prefixLength() {
        #expect(Self.key("2001:db8:aa:bb::1", prefix: 48) == "2001:db8:aa::/48")
        #expect(Self.key("2001:db8:aa:bb::1", prefix: 128) == "2001:db8:aa:bb::1")
        #expect(Self.key("2001:db8:aa:bb::2", prefix: 128) != Self.key("2001:db8:aa:bb::1", prefix: 128))
        #expect(Self.key("2001:db8:ffff::1", prefix: 36) == "2001:db8:f000::/36")
        // Out of range: clamped to 1-128.
        #expect(Self.key("2001:db8::1", prefix: 0) == "::/1")
        #expect(Self.key("fd00::1", prefix: 0) == "8000::/1")
        #expect(Self.key("2001:db8::1", prefix: 500) == "2001:db8::1")
    }

    @Test("loopback and link-local IPv6 count each address on its own, the scope kept")
    func perAddress() {
        #expect(Self.key("::1") == "::1")
        #expect(Self.key("0:0:0:0:0:0:0:1") == "::1")
        #expect(Self.key("fe80::1") == "fe80::1")
        #expect(Self.key("fe80::2") != Self.key("fe80::1"))
        #expect(Self.key("febf::1") == "febf::1")
        #expect(Self.key("fe80::1%eth0") == "fe80::1%eth0")
        #expect(Self.key("fe80::1%eth0") != Self.key("fe80::1%eth1"))
    }

    @Test("text that is no IP address counts as it is")
    func notAnAddress() {
        for text in ["?", "", "fd00::1::2", "1:2:3:4:5:6:7:8:9", "fd00:12345::1", "host.example"] {
            #expect(Self.key(text) == text)
        }
    }

    @Test("IPv6 text reads and writes back in RFC 5952's form")
    func ipv6Text() throws {
        let cases = [
            ("2001:0db8:0000:0000:0000:0000:0002:0001", "2001:db8::2:1"),
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("::", "::"),
            ("1::", "1::"),
            ("::ffff:192.0.2.7", "::ffff:c000:207"),
        ]
        for (text, written) in cases {
            let bytes = try #require(IPAddressText.ipv6Bytes(text[...]), "\(text)")
            #expect(IPAddressText.ipv6Text(bytes) == written)
        }
        for text in [":1::2", "1::2:", "1:2:3:4:5:6:7", "::1.2.3", "::256.0.0.1", "g::1", "1:::2"] {
            #expect(IPAddressText.ipv6Bytes(text[...]) == nil, "\(text)")
        }
    }

    @Test("the limits count by the key: 40 addresses of one /64 are one source, another /64 is another")
    func limitsCountByKey() {
        var admission = HandshakeAdmission(limits: .init(maximum: 64, maximumPerAddress: 16))
        for id in 1...40 { _ = admission.arrived(UInt64(id), from: "fd00:1::\(String(id, radix: 16))") }
        #expect(admission.count == 16)
        #expect(admission.count(from: "fd00:1::ffff") == 16)
        #expect(admission.arrived(100, from: "fd00:2::1") == nil)
        var each = HandshakeAdmission(limits: .init(maximum: 64, maximumPerAddress: 16, ipv6PrefixLength: 128))
        for id in 1...40 { _ = each.arrived(UInt64(id), from: "fd00:1::\(String(id, radix: 16))") }
        #expect(each.count == 40)

        var limiter = InvitationRateLimiter(
            limits: .init(pendingPerPeer: 4, peerBurst: 4, peerPerSecond: 1, addressBurst: 8, addressPerSecond: 0)
        )
        var admitted = 0
        for id in 1...40 where limiter.request(peer: "p\(id)", address: "fd00:1::\(id)", now: 0) == .admit {
            admitted += 1
        }
        #expect(admitted == 8)
        #expect(limiter.request(peer: "other", address: "fd00:2::1", now: 0) == .admit)
    }
}
