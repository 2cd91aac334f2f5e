import Testing

@testable import PeerConnectivity

/// `PageCacheRoom`, on the texts of `/proc` and `/sys` files: how much of a received file is left to the
/// kernel, and where a control group's memory limits are.
@Suite("Room in the page cache for a received file")
struct PageCacheRoomTests {
    private func vmstat(threshold: UInt64, dirty: UInt64, writeback: UInt64) -> String {
        """
        nr_free_pages 2349803
        nr_dirty \(dirty)
        nr_writeback \(writeback)
        nr_writeback_temp 0
        nr_dirty_threshold 4000
        nr_dirty_background_threshold \(threshold)
        pgpgin 3170316
        """
    }

    @Test("half of the background threshold less what is dirty or in writeback, in bytes")
    func share() {
        let text = vmstat(threshold: 1_000, dirty: 150, writeback: 50)
        #expect(PageCacheRoom.fileShare(vmstat: text, pageSize: 4_096) == 400 * 4_096)
    }

    @Test("less what other files have claimed and not written yet, in whole pages")
    func claimed() {
        let text = vmstat(threshold: 1_000, dirty: 150, writeback: 50)
        #expect(PageCacheRoom.fileShare(vmstat: text, pageSize: 4_096, claimed: 200 * 4_096) == 300 * 4_096)
        #expect(PageCacheRoom.fileShare(vmstat: text, pageSize: 4_096, claimed: 201 * 4_096 - 1) == 299 * 4_096)
        #expect(PageCacheRoom.fileShare(vmstat: text, pageSize: 4_096, claimed: 800 * 4_096) == 0)
        #expect(PageCacheRoom.fileShare(vmstat: text, pageSize: 4_096, claimed: .max) == 0)
    }

    @Test("numbers too large to add or multiply give none, not a crash")
    func overflow() {
        let huge = UInt64.max - 1
        let full = vmstat(threshold: huge, dirty: huge, writeback: huge)
        #expect(PageCacheRoom.fileShare(vmstat: full, pageSize: 4_096) == 0)
        #expect(PageCacheRoom.fileShare(vmstat: vmstat(threshold: huge, dirty: 1, writeback: 1), pageSize: 4_096) == 0)
        #expect(PageCacheRoom.fileShare(vmstat: vmstat(threshold: 1_000, dirty: 0, writeback: 0), pageSize: 0) == 0)
    }

    @Test("none once the dirty pages reach the threshold, or when a number is missing")
    func none() {
        #expect(
            PageCacheRoom.fileShare(vmstat: vmstat(threshold: 1_000, dirty: 900, writeback: 100), pageSize: 4_096) == 0
        )
        #expect(
            PageCacheRoom.fileShare(vmstat: vmstat(threshold: 1_000, dirty: 2_000, writeback: 0), pageSize: 4_096) == 0
        )
        #expect(PageCacheRoom.fileShare(vmstat: "nr_dirty 1\nnr_writeback 0\n", pageSize: 4_096) == 0)
        #expect(PageCacheRoom.fileShare(vmstat: "", pageSize: 4_096) == 0)
    }

    @Test("cgroup v2: memory.max of the group and of each group above it")
    func unified() {
        #expect(
            PageCacheRoom.memoryLimitFiles(procCgroup: "0::/system.slice/peer.service\n") == [
                "/sys/fs/cgroup/system.slice/peer.service/memory.max",
                "/sys/fs/cgroup/system.slice/memory.max",
                "/sys/fs/cgroup/memory.max",
            ]
        )
        #expect(PageCacheRoom.memoryLimitFiles(procCgroup: "0::/\n") == ["/sys/fs/cgroup/memory.max"])
    }

    @Test("the memory controller on cgroup v1, beside others and the unified line")
    func legacy() {
        let text = "9:name=systemd:/\n4:memory:/jobs/a1\n1:cpu,cpuacct:/\n0::/\n"
        #expect(
            PageCacheRoom.memoryLimitFiles(procCgroup: text) == [
                "/sys/fs/cgroup/memory/jobs/a1/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            ]
        )
        #expect(
            PageCacheRoom.memoryLimitFiles(procCgroup: "3:cpu,memory:/x\n") == [
                "/sys/fs/cgroup/memory/x/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            ]
        )
    }

    @Test("a text this does not know gives no files")
    func unknown() {
        #expect(PageCacheRoom.memoryLimitFiles(procCgroup: "") == nil)
        #expect(PageCacheRoom.memoryLimitFiles(procCgroup: "garbage\n") == nil)
        #expect(PageCacheRoom.memoryLimitFiles(procCgroup: "1:cpu:/\n") == nil)
    }

    @Test("a limit is a number under 2^62; max and v1's unlimited are none")
    func limits() {
        #expect(!PageCacheRoom.isLimit("max\n"))
        #expect(!PageCacheRoom.isLimit("9223372036854771712\n"))
        #expect(PageCacheRoom.isLimit("2147483648\n"))
        #expect(PageCacheRoom.isLimit("nonsense\n"), "an unknown text counts as a limit: the cautious side")
    }
}
