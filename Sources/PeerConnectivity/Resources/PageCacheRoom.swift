/// How much of a received file the kernel's page cache can hold dirty before the kernel starts writing
/// it back on its own: what ``WriteBehind`` leaves to the kernel at the start of a file.
///
/// Linux starts background writeback once the dirty and in-writeback pages pass its background threshold,
/// and throttles every writer once they pass the dirty threshold, twice that by default. A file that stays
/// under the first is written at the page cache's pace and written back later; one that goes past it
/// waits for background writeback, which some disks serve at a fraction of their rate. So the room is
/// the background threshold less what is dirty or in writeback now (`/proc/vmstat`) and less what other
/// files being received have claimed and not written yet (``PageCacheLedger``), and a file takes half of
/// it, leaving the rest to other writers: files arriving together claim a half, a quarter, an eighth, and
/// never more than the room between them.
///
/// The numbers are the whole system's. A process in a control group with a memory limit (its own or one
/// above it) may have lower thresholds of its own, which `/proc/vmstat` does not show: there, and
/// wherever the numbers cannot be read, the room is none, and ``WriteBehind`` writes behind from the
/// first window, as it did before it left any of a file to the kernel.
///
/// Pure: the receiver's shell reads the files and hands their text here.
enum PageCacheRoom {
    /// Bytes a file may leave to the kernel, given `/proc/vmstat`'s text, the page size and the bytes
    /// other files have claimed and not written yet: half of the background threshold less the pages
    /// dirty or in writeback and less the claims, in whole pages; 0 when a number is missing.
    static func fileShare(vmstat: String, pageSize: UInt64, claimed: UInt64 = 0) -> UInt64 {
        var fields: [Substring: UInt64] = [:]
        for line in vmstat.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = UInt64(parts[1]) else { continue }
            fields[parts[0]] = value
        }
        guard let threshold = fields["nr_dirty_background_threshold"], let dirty = fields["nr_dirty"],
            let writeback = fields["nr_writeback"]
        else { return 0 }
        let (taken, tooMany) = dirty.addingReportingOverflow(writeback)
        guard !tooMany, taken < threshold else { return 0 }
        let (room, tooLarge) = (threshold - taken).multipliedReportingOverflow(by: pageSize)
        guard !tooLarge, room > claimed, pageSize > 0 else { return 0 }
        return (room - claimed) / 2 / pageSize * pageSize
    }

    /// The files that hold the memory limits of a process's control group and of each group above it,
    /// from its `/proc/<pid>/cgroup`: `memory.limit_in_bytes` below `/sys/fs/cgroup/memory` where the
    /// memory controller is on cgroup v1, else `memory.max` below `/sys/fs/cgroup` (cgroup v2); `nil` for
    /// a text this does not know.
    static func memoryLimitFiles(procCgroup: String) -> [String]? {
        var unified: Substring?
        for line in procCgroup.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[2].hasPrefix("/") else { return nil }
            if parts[1].split(separator: ",").contains("memory") {
                return ancestry(of: parts[2]).map { "/sys/fs/cgroup/memory\($0)/memory.limit_in_bytes" }
            }
            if parts[0] == "0" && parts[1].isEmpty { unified = parts[2] }
        }
        guard let unified else { return nil }
        return ancestry(of: unified).map { "/sys/fs/cgroup\($0)/memory.max" }
    }

    /// Whether a memory limit file's text sets a limit: not "max" (cgroup v2's none), nor a number of
    /// 2^62 or more (cgroup v1's none is 2^63 less a page).
    static func isLimit(_ text: String) -> Bool {
        let value = text.split(separator: "\n").first ?? ""
        if value == "max" { return false }
        guard let bytes = UInt64(value) else { return true }
        return bytes < 1 << 62
    }

    /// `path` and each folder above it, the root (an empty string) last.
    private static func ancestry(of path: Substring) -> [String] {
        var components = path.split(separator: "/")
        var paths: [String] = []
        while !components.isEmpty {
            paths.append("/" + components.joined(separator: "/"))
            components.removeLast()
        }
        paths.append("")
        return paths
    }
}
