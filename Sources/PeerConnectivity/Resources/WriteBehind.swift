/// What a received resource asks of the kernel's page cache as its file grows: past a free run left to
/// the kernel, start writing each window of bytes to disk as soon as it is complete, and drop from the
/// cache what was handed to writeback two windows earlier, so a large resource leaves a bounded trail of
/// dirty and cached pages.
///
/// Why: Linux starts writing dirty pages back on its own only past its background threshold, and past
/// twice that it throttles every writer to what that background writeback achieves, which some disks
/// serve at a fraction of their rate. With this advice from the first byte, a 4 GiB resource into ext4
/// kept its rate where one left to the kernel fell to about half of it; but for a file that stays under
/// the threshold, the early writeback on the writer's own thread cost a fifth of the rate
/// (PERFORMANCE-HISTORY, "Received files and the page cache"). So the start of a file, as much as
/// ``PageCacheRoom`` finds room for under the threshold, is left to the kernel (``freeRun``), and the
/// rest written behind. The drop also keeps a 10 GiB transfer from pushing the application's own data
/// out of the cache, and lets the later writes reuse the pages dropped (on a virtual machine where a
/// fresh page cost a fault to the host, that took writing 1 GiB from 2.3-2.5 s of system time to 0.5-0.67
/// on 2026-11-24).
///
/// Both steps are advice. On Linux ``PageCacheAdvisor`` asks both with `posix_fadvise(DONTNEED)`,
/// which starts writeback of the dirty pages of a range and drops its clean ones (the Glibc module
/// has no `sync_file_range`); a page still dirty or being written is not dropped, and a file system
/// that ignores the advice loses nothing. Elsewhere nothing is asked.
///
/// A pure value: ``wrote(upTo:)`` says what to ask, the receiver asks it.
struct WriteBehind {
    /// A range of the file, in bytes.
    struct Range: Equatable {
        var offset: UInt64
        var length: UInt64
    }

    /// What to ask of the kernel after a write.
    struct Advice: Equatable {
        /// Bytes to start writing to disk now, without waiting for them.
        var startWriteback: Range?
        /// Bytes to drop from the page cache (those already on disk).
        var dropFromCache: Range?
    }

    /// Bytes of the file per window: writeback starts once a window is complete.
    let window: UInt64
    /// Bytes from the start of the file left to the kernel: nothing is asked about them.
    let freeRun: UInt64
    /// Where the bytes not yet handed to writeback start (the free run's end at first).
    private var writebackStarted: UInt64
    /// Where the bytes not yet dropped from the cache start (the free run's end at first).
    private var dropped: UInt64

    /// The default window: 8 MiB (two to three windows stay cached behind the writer, 16-24 MiB, when
    /// the disk keeps up; a page still dirty when its drop is asked is not asked again).
    static let defaultWindow: UInt64 = 8 << 20

    /// Makes the policy for a new, empty file.
    ///
    /// - Parameters:
    ///   - window: bytes per window (at least 1).
    ///   - freeRun: bytes from the start of the file to leave to the kernel; the windows start after them.
    init(window: UInt64 = WriteBehind.defaultWindow, freeRun: UInt64 = 0) {
        self.window = max(1, window)
        self.freeRun = freeRun
        self.writebackStarted = freeRun
        self.dropped = freeRun
    }

    /// The file now holds `written` bytes: what to ask of the kernel, if anything.
    ///
    /// - Parameter written: the file's length so far (never less than before).
    /// - Returns: the advice; both ranges are `nil` until a window past the free run completes.
    mutating func wrote(upTo written: UInt64) -> Advice {
        guard written >= writebackStarted + window else { return Advice() }
        let writeback = Range(offset: writebackStarted, length: written - writebackStarted)
        writebackStarted = written
        guard writebackStarted >= dropped + 3 * window else { return Advice(startWriteback: writeback) }
        let dropEnd = writebackStarted - 2 * window
        let drop = Range(offset: dropped, length: dropEnd - dropped)
        dropped = dropEnd
        return Advice(startWriteback: writeback, dropFromCache: drop)
    }
}
