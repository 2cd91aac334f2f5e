import PeerConnectivityCore
import Testing

/// What a folder received whole may take of the disk: its entries against the free inodes, its files'
/// room against the free bytes, judged before each file is made.
@Suite("Folder budget")
struct FolderBudgetTests {
    @Test(
        "a file's room is its length rounded up to 4 KiB, and one unit when it is empty",
        arguments: [
            (UInt64(0), UInt64(4096)), (1, 4096), (4096, 4096), (4097, 8192), (1 << 20, 1 << 20),
            (UInt64.max, UInt64.max),
        ]
    )
    func room(length: UInt64, expected: UInt64) {
        #expect(FolderBudget.room(forLength: length) == expected)
    }

    @Test("entries past the free inodes are refused, the budget unchanged")
    func entries() throws {
        var budget = FolderBudget(freeInodes: 3, freeBytes: nil)
        for _ in 0..<3 { try budget.admit(length: 0) }
        #expect(throws: FolderBudget.Refusal.tooManyEntries(limit: 3)) { try budget.admit(length: 0) }
        #expect(budget.entries == 3)
        #expect(budget.bytes == 3 * 4096)
    }

    @Test("files past the free bytes are refused, counting each empty file a unit; the budget unchanged")
    func bytes() throws {
        var budget = FolderBudget(freeInodes: nil, freeBytes: 13_000)
        try budget.admit(length: 0)
        try budget.admit(length: 4097)
        #expect(throws: FolderBudget.Refusal.noSpace(needed: 16_384, free: 13_000)) { try budget.admit(length: 1) }
        #expect(budget.entries == 2)
        #expect(budget.bytes == 12_288)
        #expect(throws: FolderBudget.Refusal.noSpace(needed: .max, free: 13_000)) { try budget.admit(length: .max) }
    }

    @Test("a figure not known, or no inodes reported, limits nothing")
    func unknown() throws {
        var budget = FolderBudget(freeInodes: 0, freeBytes: nil)
        #expect(budget.freeInodes == nil)
        for _ in 0..<10_000 { try budget.admit(length: 1 << 30) }
        var unlimited = FolderBudget.unlimited
        try unlimited.admit(length: .max)
        try unlimited.admit(length: .max)
        #expect(unlimited.bytes == .max)
    }

    @Test("a refusal says what was counted and against what")
    func description() {
        #expect("\(FolderBudget.Refusal.tooManyEntries(limit: 5))".contains("more than 5 entries"))
        #expect("\(FolderBudget.Refusal.noSpace(needed: 8192, free: 100))".contains("8192 bytes on disk, 100"))
    }
}
