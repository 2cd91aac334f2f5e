import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// The free-space check at a resource's OPEN: one reading of the file system for many resources.
@Suite("FreeSpaceGauge")
struct FreeSpaceGaugeTests {
    @Test("resources admitted within a reading are taken off it; the next that does not fit is refused")
    func admittedAreTakenOff() throws {
        let scratch = try ScratchDirectory("free-space")
        defer { scratch.remove() }
        let free = try #require(FreeSpaceGauge.freeBytes(below: scratch.url.path))
        let gauge = FreeSpaceGauge(directoryPath: scratch.url.path, readingLifetime: .seconds(3600))
        #expect(gauge.refuses(free / 2) == nil)
        let left = try #require(gauge.refuses(free / 4 * 3), "half of the reading is taken already")
        #expect(left == free - free / 2)
        #expect(gauge.refuses(free / 4) == nil, "what still fits is admitted")
        #expect(gauge.refuses(UInt64.max) != nil)
    }

    @Test("an old reading is not used: the file system is asked again")
    func readingExpires() throws {
        let scratch = try ScratchDirectory("free-space-expiry")
        defer { scratch.remove() }
        let free = try #require(FreeSpaceGauge.freeBytes(below: scratch.url.path))
        let gauge = FreeSpaceGauge(directoryPath: scratch.url.path, readingLifetime: .zero)
        #expect(gauge.refuses(free / 4 * 3) == nil)
        #expect(gauge.refuses(free / 4 * 3) == nil, "asked again, the bytes admitted before were not written")
    }

    @Test("a directory not made yet is judged by its nearest existing parent")
    func missingDirectory() throws {
        let scratch = try ScratchDirectory("free-space-missing")
        defer { scratch.remove() }
        let missing = scratch.url.appendingPathComponent("not/made/yet").path
        #expect(FreeSpaceGauge.freeBytes(below: missing) != nil)
        #expect(FreeSpaceGauge(directoryPath: missing).refuses(UInt64.max) != nil)
    }
}
