import Synchronization

/// The room under the kernel's background dirty threshold that the files being received in this
/// process have claimed for their free runs (``WriteBehind/freeRun``) and not written yet.
///
/// A file's written pages show in `/proc/vmstat` as dirty; the rest of its free run does not, yet. Without
/// the ledger, files that reach their first window together would each see the whole room and take half
/// of it, and eight of them would leave four times the room dirty, past the point where the kernel
/// throttles every writer. With it, each takes half of what the others left: the claims never add up to
/// more than the room.
///
/// The shell of ``PageCacheRoom``: a claim is made under the ledger's lock, which the share's reading of
/// `/proc` runs inside, so two files never claim the same room; a claim gives back what its file writes,
/// and the rest when it goes.
final class PageCacheLedger: Sendable {
    /// The process's ledger.
    static let shared = PageCacheLedger()

    private let unwritten = Mutex<UInt64>(0)

    /// Bytes claimed by all live claims and not written yet.
    var claimed: UInt64 {
        unwritten.withLock { $0 }
    }

    /// Claims a file's free run: `share` is given the bytes claimed by the others and returns this
    /// file's free run, under the ledger's lock.
    func claim(_ share: (_ claimedByOthers: UInt64) -> UInt64) -> Claim {
        unwritten.withLock { total in
            let freeRun = share(total)
            total += freeRun
            return Claim(ledger: self, freeRun: freeRun)
        }
    }

    private func giveBack(_ bytes: UInt64) {
        guard bytes > 0 else { return }
        unwritten.withLock { $0 -= min($0, bytes) }
    }

    /// One file's claim: its free run, of which the part not yet written counts as taken.
    final class Claim: Sendable {
        /// The bytes from the start of the file left to the kernel.
        let freeRun: UInt64
        private let ledger: PageCacheLedger
        /// The part of the free run not yet written (and not yet given back).
        private let remaining: Mutex<UInt64>

        fileprivate init(ledger: PageCacheLedger, freeRun: UInt64) {
            self.ledger = ledger
            self.freeRun = freeRun
            self.remaining = Mutex(freeRun)
        }

        /// The file now holds `written` bytes from its start: gives back the part of the free run that
        /// they cover (the kernel counts those pages now).
        func wrote(upTo written: UInt64) {
            let given = remaining.withLock { remaining in
                let left = freeRun - min(written, freeRun)
                guard left < remaining else { return UInt64(0) }
                defer { remaining = left }
                return remaining - left
            }
            ledger.giveBack(given)
        }

        deinit {
            ledger.giveBack(remaining.withLock { $0 })
        }
    }
}
