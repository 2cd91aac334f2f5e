import PeerConnectivityCore
import Testing

@Suite("Which pending handshakes a listener keeps")
struct HandshakeAdmissionTests {
    @Test("below the limits every connection is admitted and none gives way")
    func belowLimits() {
        var admission = HandshakeAdmission(limits: .init(maximum: 4, maximumPerAddress: 2))
        #expect(admission.arrived(1, from: "10.0.0.1") == nil)
        #expect(admission.arrived(2, from: "10.0.0.2") == nil)
        #expect(admission.arrived(3, from: "10.0.0.1") == nil)
        #expect(admission.count == 3)
        #expect(admission.count(from: "10.0.0.1") == 2)
    }

    @Test("at the global limit the oldest gives way and the newest is admitted")
    func globalLimitEvictsOldest() {
        var admission = HandshakeAdmission(limits: .init(maximum: 3, maximumPerAddress: 3))
        for id in 1...3 { #expect(admission.arrived(UInt64(id), from: "10.0.0.\(id)") == nil) }
        #expect(admission.arrived(4, from: "10.0.0.4") == 1)
        #expect(admission.arrived(5, from: "10.0.0.5") == 2)
        #expect(admission.count == 3)
        #expect(admission.count(from: "10.0.0.1") == 0)
    }

    @Test("at an address's limit the oldest from that address gives way, not another host's")
    func perAddressLimitEvictsOwnOldest() {
        var admission = HandshakeAdmission(limits: .init(maximum: 10, maximumPerAddress: 2))
        #expect(admission.arrived(1, from: "10.0.0.9") == nil)  // a real peer, oldest of all
        #expect(admission.arrived(2, from: "10.0.0.66") == nil)
        #expect(admission.arrived(3, from: "10.0.0.66") == nil)
        #expect(admission.arrived(4, from: "10.0.0.66") == 2)
        #expect(admission.arrived(5, from: "10.0.0.66") == 3)
        #expect(admission.count(from: "10.0.0.9") == 1)
        #expect(admission.count(from: "10.0.0.66") == 2)
    }

    @Test("a finished handshake frees its place; unknown and repeated ids are ignored")
    func finishedFreesPlace() {
        var admission = HandshakeAdmission(limits: .init(maximum: 2, maximumPerAddress: 2))
        _ = admission.arrived(1, from: "a")
        _ = admission.arrived(2, from: "b")
        admission.finished(1)
        admission.finished(1)
        admission.finished(99)
        #expect(admission.count == 1)
        #expect(admission.arrived(3, from: "c") == nil)
        #expect(admission.arrived(4, from: "d") == 2)
    }

    @Test("a flood of 1,000 from many addresses keeps at most the limit, and the real peer that came last is kept")
    func floodKeepsNewest() {
        var admission = HandshakeAdmission(limits: .init(maximum: 64, maximumPerAddress: 16))
        var evicted = 0
        for id in 0..<1_000 where admission.arrived(UInt64(id), from: "127.0.\(id / 250).\(id % 250 + 1)") != nil {
            evicted += 1
        }
        #expect(admission.count == 64)
        #expect(evicted == 1_000 - 64)
        #expect(admission.arrived(5_000, from: "127.0.0.1") != nil)
        #expect(admission.count(from: "127.0.0.1") == 1)
        admission.finished(5_000)
        #expect(admission.count == 63)
    }

    @Test("limits are at least 1, and the per-address limit at most the global one")
    func limitsClamp() {
        #expect(HandshakeAdmission.Limits(maximum: 0, maximumPerAddress: 0).maximum == 1)
        #expect(HandshakeAdmission.Limits(maximum: 4, maximumPerAddress: 9).maximumPerAddress == 4)
    }
}
