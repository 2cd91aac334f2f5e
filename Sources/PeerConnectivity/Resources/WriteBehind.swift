/// What a received resource asks of the kernel's page cache as its file grows: start writing each
/// window of bytes to disk as soon as it is complete, and drop from the cache what was handed to
/// writeback two windows earlier, so a large resource leaves a bounded trail of cached pages.
///
/// Why: every page the cache takes for a new file is a fresh page. On virtual machines that give
/// free memory back to the host, a fresh page costs the writer a fault to the host and a zeroing:
/// writing 1 GiB to an ext4 file in 64 KiB writes took 2.3-2.5 s of system time on this project's
/// machine, and 0.50-0.67 s when each 8 MiB written was handed to writeback at once and dropped two
/// windows later, so that its pages were reused (a C loop, `POSIX_FADV_DONTNEED` for both steps).
/// The drop also keeps a 10 GiB transfer from pushing the application's own data out of the cache.
///
/// Both steps are advice. On Linux ``FileWriter`` asks both with `posix_fadvise(DONTNEED)`,
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
    /// Bytes from the start of the file already handed to writeback.
    private var writebackStarted: UInt64 = 0
    /// Bytes from the start of the file already dropped from the cache.
    private var dropped: UInt64 = 0

    /// The default window: 8 MiB (two to three windows stay cached behind the writer, 16-24 MiB, when
    /// the disk keeps up; a page still dirty when its drop is asked is not asked again).
    static let defaultWindow: UInt64 = 8 << 20

    /// Makes the policy for a new, empty file.
    ///
    /// - Parameter window: bytes per window (at least 1).
    init(window: UInt64 = WriteBehind.defaultWindow) {
        self.window = max(1, window)
    }

    /// The file now holds `written` bytes: what to ask of the kernel, if anything.
    ///
    /// - Parameter written: the file's length so far (never less than before).
    /// - Returns: the advice; both ranges are `nil` until a window completes.
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
