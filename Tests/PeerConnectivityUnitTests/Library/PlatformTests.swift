import PeerConnectivityTransport
import Testing

/// The C library's part, in one place: addresses in text and bytes, the descriptor limit, accept errors.
@Suite("Platform")
struct PlatformTests {
    @Test("IPv4 and IPv6 addresses go to bytes and back; anything else is nil")
    func addresses() {
        #expect(Platform.addressBytes("192.0.2.7") == [192, 0, 2, 7])
        #expect(Platform.addressBytes("fe80::1")?.count == 16)
        #expect(Platform.addressBytes("fe80::1").flatMap { Platform.addressString($0) } == "fe80::1")
        #expect(Platform.addressString([10, 0, 0, 2]) == "10.0.0.2")
        #expect(Platform.addressBytes("not an address") == nil)
        #expect(Platform.addressString([1, 2, 3]) == nil)
    }

    @Test("the descriptor limit is read, and resource exhaustion is told from other accept errors")
    func limitsAndErrors() {
        #expect((Platform.fileDescriptorLimit ?? 0) > 0)
        #expect(Platform.isResourceExhaustion(24))  // EMFILE
        #expect(Platform.isOutOfFileDescriptors(23))  // ENFILE
        #expect(!Platform.isResourceExhaustion(111))  // ECONNREFUSED
        #expect(!Platform.isOutOfFileDescriptors(12))  // ENOMEM: exhaustion, but not of descriptors
    }
}
