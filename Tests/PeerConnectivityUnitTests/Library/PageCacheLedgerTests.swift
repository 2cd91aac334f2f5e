import Dispatch
import Synchronization
import Testing

@testable import PeerConnectivity

/// `PageCacheLedger`: files being received together share the room under the background threshold
/// rather than each taking half of all of it, and give back what they write and what they leave.
@Suite("The page cache's room, claimed by files received together")
struct PageCacheLedgerTests {
    /// The room a test's `/proc/vmstat` would show, in bytes, with nothing dirty.
    private let room: UInt64 = 1 << 30

    /// The share ``PageCacheRoom`` gives with `claimed` bytes claimed: half of what is left.
    private func share(_ claimed: UInt64) -> UInt64 {
        claimed >= room ? 0 : (room - claimed) / 2
    }

    @Test("files that reach their first window together take a half, a quarter, an eighth")
    func together() {
        let ledger = PageCacheLedger()
        let claims = (0..<3).map { _ in ledger.claim(share) }
        #expect(claims.map(\.freeRun) == [room / 2, room / 4, room / 8])
        #expect(ledger.claimed == room / 2 + room / 4 + room / 8)
    }

    @Test("what a file writes is given back; writing less than before gives nothing")
    func written() {
        let ledger = PageCacheLedger()
        let first = ledger.claim(share)
        first.wrote(upTo: room / 8)
        #expect(ledger.claimed == room / 2 - room / 8)
        first.wrote(upTo: room / 16)
        #expect(ledger.claimed == room / 2 - room / 8)
        // The next file sees the room less the part not yet written (the kernel counts the rest as dirty).
        let second = ledger.claim(share)
        #expect(second.freeRun == (room - (room / 2 - room / 8)) / 2)
        first.wrote(upTo: room)
        second.wrote(upTo: .max)
        #expect(ledger.claimed == 0)
    }

    @Test("a claim that goes gives back what it did not write")
    func released() {
        let ledger = PageCacheLedger()
        var claim: PageCacheLedger.Claim? = ledger.claim(share)
        claim?.wrote(upTo: room / 4)
        #expect(ledger.claimed == room / 4)
        claim = nil
        #expect(ledger.claimed == 0)
        #expect(ledger.claim(share).freeRun == room / 2)
    }

    @Test("a file with no free run claims nothing")
    func none() {
        let ledger = PageCacheLedger()
        let claim = ledger.claim { _ in 0 }
        claim.wrote(upTo: 1 << 20)
        #expect(claim.freeRun == 0)
        #expect(ledger.claimed == 0)
    }

    @Test("claims made on many threads at once never add up to more than the room")
    func concurrent() {
        let ledger = PageCacheLedger()
        let claims = Mutex<[PageCacheLedger.Claim]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let claim = ledger.claim(share)
            claims.withLock { $0.append(claim) }
        }
        let runs = claims.withLock { $0.map(\.freeRun) }
        #expect(runs.count == 16)
        #expect(runs.reduce(0, +) <= room)
        #expect(runs.reduce(0, +) == ledger.claimed)
        #expect(Set(runs).count == 16, "each saw the claims before it: no two the same")
    }
}
