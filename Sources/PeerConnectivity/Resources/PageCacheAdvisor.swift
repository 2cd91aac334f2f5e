import PeerConnectivityTransport
import SystemPackage

/// What one received file asks of the page cache as it grows, for ``FileWriter`` and ``FolderWriter``:
/// once the file reaches its first window, its free run (``PageCacheRoom``, beside what the other files
/// being received have claimed) is claimed in the ``PageCacheLedger`` and its ``WriteBehind`` made; then
/// each write gives back the part of the claim it covers and asks what the policy advises. A file under a
/// window never asks the system. Advice only: a failure is ignored, as it changes nothing but what stays
/// cached.
///
/// The shell around the pure ``WriteBehind`` and ``PageCacheRoom``; it reads `/proc` once a file.
struct PageCacheAdvisor {
    private let ledger: PageCacheLedger
    private var policy: WriteBehind?
    private var claim: PageCacheLedger.Claim?

    /// An advisor for a new file, its claim made in `ledger`.
    init(ledger: PageCacheLedger = .shared) {
        self.ledger = ledger
    }

    /// The file now holds `written` bytes, through `descriptor`.
    mutating func wrote(upTo written: UInt64, descriptor: SystemPackage.FileDescriptor) {
        if policy == nil {
            guard written >= WriteBehind.defaultWindow else { return }
            let made = ledger.claim { claimed in Self.share(claimed: claimed) }
            policy = WriteBehind(freeRun: made.freeRun)
            claim = made
        }
        claim?.wrote(upTo: written)
        guard let advice = policy?.wrote(upTo: written) else { return }
        if let range = advice.startWriteback {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
        if let range = advice.dropFromCache {
            Platform.adviseNotNeeded(descriptor.rawValue, offset: range.offset, length: range.length)
        }
    }

    /// The bytes of a file to leave to the kernel now (``PageCacheRoom``), with `claimed` bytes claimed by
    /// other files: none off Linux, in a control group with a memory limit, or where the numbers cannot be
    /// read.
    static func share(claimed: UInt64) -> UInt64 {
        #if os(Linux)
            guard let groups = Platform.contents(ofSmallFileAt: "/proc/self/cgroup"),
                let limitFiles = PageCacheRoom.memoryLimitFiles(procCgroup: groups)
            else { return 0 }
            // A group without the file (the root, or no memory controller there) sets no limit.
            for file in limitFiles {
                if let limit = Platform.contents(ofSmallFileAt: file), PageCacheRoom.isLimit(limit) { return 0 }
            }
            guard let vmstat = Platform.contents(ofSmallFileAt: "/proc/vmstat", limit: 65_536) else { return 0 }
            return PageCacheRoom.fileShare(vmstat: vmstat, pageSize: Platform.pageSize, claimed: claimed)
        #else
            return 0
        #endif
    }
}
