import PeerConnectivityCore
import Testing

@testable import PeerConnectivityBench

/// Who holds the reflector's places, and whom a newcomer takes one from.
@Suite("The reflector's places, per source")
struct RunnerPlacesTests {
    static func source(_ address: String) -> AdmissionKey { AdmissionKey(address: address) }

    @Test("below the limits every runner is admitted; a source at its limit is refused, naming it")
    func limits() {
        var places = RunnerPlaces(maximum: 4, maximumPerSource: 2)
        #expect(places.arrived(1, from: Self.source("fd00:1::1")) == .admitted)
        #expect(places.arrived(2, from: Self.source("fd00:1::2")) == .admitted)
        // A third address of the same /64 is the same source.
        #expect(
            places.arrived(3, from: Self.source("fd00:1::3")) == .refused("2 runners from fd00:1::/64 served already")
        )
        #expect(places.arrived(4, from: Self.source("127.0.0.1")) == .admitted)
        #expect(places.count == 3)
        #expect(places.count(of: Self.source("fd00:1::99")) == 2)
        places.left(1)
        places.left(1)
        places.left(42)
        #expect(places.count == 2)
        #expect(places.arrived(5, from: Self.source("fd00:1::3")) == .admitted)
    }

    @Test("full: a newcomer whose source holds none takes the longest-held place of the source that holds the most")
    func evictsLargestSourcesOldest() {
        var places = RunnerPlaces(maximum: 6, maximumPerSource: 6)
        // fd00:1::/64 holds 3 (ids 2, 3, 5), 10.0.0.1 holds 2 (1, 4), ::1 holds 1 (6).
        for (id, address) in [(1, "10.0.0.1"), (2, "fd00:1::1"), (3, "fd00:1::2"), (4, "10.0.0.1"), (5, "fd00:1::3")] {
            #expect(places.arrived(id, from: Self.source(address)) == .admitted)
        }
        #expect(places.arrived(6, from: Self.source("::1")) == .admitted)
        #expect(places.arrived(7, from: Self.source("fd00:2::1")) == .admittedEvicting(2))
        #expect(places.count(of: Self.source("fd00:1::1")) == 2)
        #expect(places.count == 6)
        // Now 10.0.0.1 and fd00:1::/64 hold 2 each: the one whose longest-held runner came first gives way.
        #expect(places.arrived(8, from: Self.source("127.0.0.1")) == .admittedEvicting(1))
        #expect(places.arrived(9, from: Self.source("192.0.2.1")) == .admittedEvicting(3))
        // The evicted runner's end frees nothing more.
        places.left(2)
        #expect(places.count == 6)
    }

    @Test("full: a newcomer whose source holds a place already is refused, and so is anyone when no source holds two")
    func refusesWhenFair() {
        var places = RunnerPlaces(maximum: 3, maximumPerSource: 3)
        #expect(places.arrived(1, from: Self.source("fd00:1::1")) == .admitted)
        #expect(places.arrived(2, from: Self.source("fd00:1::2")) == .admitted)
        #expect(places.arrived(3, from: Self.source("10.0.0.1")) == .admitted)
        #expect(places.arrived(4, from: Self.source("10.0.0.1")) == .refused("3 runners served already"))
        #expect(places.arrived(5, from: Self.source("fd00:1::9")) == .refused("3 runners served already"))
        #expect(places.arrived(6, from: Self.source("10.0.0.2")) == .admittedEvicting(1))
        // One place each now: nobody holds more than a newcomer would.
        #expect(places.arrived(7, from: Self.source("10.0.0.3")) == .refused("3 runners served already"))
    }

    @Test("a /64 that floods keeps at most its share, and every other source still gets in")
    func floodOfOneNetwork() {
        var places = RunnerPlaces(maximum: 32, maximumPerSource: 8)
        var id = 0
        var refused = 0
        for host in 1...40 {
            id += 1
            if case .refused = places.arrived(id, from: Self.source("fd00:1::\(host)")) { refused += 1 }
        }
        #expect(places.count == 8 && refused == 32)
        // With every place taken by the /64 (a limit of 32 per source), newcomers take its places one by one.
        var flooded = RunnerPlaces(maximum: 32, maximumPerSource: 32)
        for host in 1...40 { _ = flooded.arrived(host, from: Self.source("fd00:1::\(host)")) }
        #expect(flooded.count == 32)
        #expect(flooded.arrived(100, from: Self.source("fd00:2::1")) == .admittedEvicting(1))
        #expect(flooded.arrived(101, from: Self.source("127.0.0.1")) == .admittedEvicting(2))
        #expect(flooded.arrived(102, from: Self.source("fd00:2::2")) == .refused("32 runners served already"))
    }
}
