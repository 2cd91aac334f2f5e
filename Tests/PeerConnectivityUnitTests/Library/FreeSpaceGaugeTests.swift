import Foundation
import PeerConnectivityTesting
import Synchronization
import Testing

@testable import PeerConnectivity

/// The free-space check at a resource's OPEN: one reading of the file system for many resources.
@Suite("FreeSpaceGauge")
struct FreeSpaceGaugeTests {
    /// A file system whose free bytes the test sets, counting how often it is asked: the real one changes
    /// under the test as other processes write.
    final class FileSystem: Sendable {
        private let state = Mutex<(free: UInt64?, asked: Int)>((nil, 0))

        init(free: UInt64?) { state.withLock { $0.free = free } }

        var free: UInt64? {
            get { state.withLock { $0.free } }
            set { state.withLock { $0.free = newValue } }
        }
        var asked: Int { state.withLock { $0.asked } }

        func read(_ path: String) -> UInt64? {
            state.withLock {
                $0.asked += 1
                return $0.free
            }
        }
    }

    @Test("resources admitted within a reading are taken off it; the next that does not fit is refused")
    func admittedAreTakenOff() throws {
        let fileSystem = FileSystem(free: 1000)
        let gauge = FreeSpaceGauge(directoryPath: "/d", readingLifetime: .seconds(3600), read: fileSystem.read)
        #expect(gauge.refuses(500) == nil)
        #expect(gauge.refuses(750) == 500, "half of the reading is taken already")
        #expect(gauge.refuses(500) == nil, "what still fits is admitted")
        #expect(gauge.refuses(1) == 0)
        #expect(fileSystem.asked == 1, "one reading for all four")
    }

    @Test("an old reading is not used: the file system is asked again")
    func readingExpires() throws {
        let fileSystem = FileSystem(free: 1000)
        let gauge = FreeSpaceGauge(directoryPath: "/d", readingLifetime: .zero, read: fileSystem.read)
        #expect(gauge.refuses(750) == nil)
        #expect(gauge.refuses(750) == nil, "asked again, the bytes admitted before were not written")
        fileSystem.free = 100
        #expect(gauge.refuses(750) == 100, "the new reading judges")
        #expect(fileSystem.asked == 3)
    }

    @Test("a file system that cannot be asked admits: the write itself then fails with its own error")
    func unknownAdmits() throws {
        let gauge = FreeSpaceGauge(directoryPath: "/d", read: FileSystem(free: nil).read)
        #expect(gauge.refuses(.max) == nil)
    }

    @Test("the real file system: a directory not made yet is judged by its nearest existing parent")
    func missingDirectory() throws {
        let scratch = try ScratchDirectory("free-space-missing")
        defer { scratch.remove() }
        let missing = scratch.url.appendingPathComponent("not/made/yet").path
        #expect(FreeSpaceGauge.freeBytes(below: missing) != nil)
        #expect(FreeSpaceGauge(directoryPath: missing).refuses(UInt64.max) != nil)
    }
}
