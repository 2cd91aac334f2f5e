import PeerConnectivityCore
import Testing

@Suite("The memory large messages being received may hold")
struct LargeMessageBudgetTests {
    private static let mebibyte = 1 << 20
    /// 32 MiB a session, 64 MiB in all, messages up to 16 MiB.
    private static let limits = LargeMessageBudget<String>.Limits(
        perOwner: 32 * mebibyte,
        total: 64 * mebibyte,
        largestMessage: 16 * mebibyte
    )

    @Test("messages are counted whole until released; the owner's limit holds, exactly at it included")
    func ownerLimit() {
        var budget = LargeMessageBudget<String>()
        let size = 16 * Self.mebibyte
        #expect(budget.reserve(size, for: "a", within: Self.limits) == .admitted)
        #expect(budget.reserve(size, for: "a", within: Self.limits) == .admitted)
        #expect(budget.held(by: "a") == 32 * Self.mebibyte)
        #expect(
            budget.reserve(1, for: "a", within: Self.limits)
                == .overOwner(held: 32 * Self.mebibyte, limit: 32 * Self.mebibyte)
        )
        // Another owner is not held back by the first one's limit.
        #expect(budget.reserve(size, for: "b", within: Self.limits) == .admitted)
        budget.release(size, for: "a")
        #expect(budget.held(by: "a") == size)
        #expect(budget.reserve(size, for: "a", within: Self.limits) == .admitted)
    }

    @Test("the total holds across owners: the owner that would go over it is refused, whoever holds the rest")
    func totalLimit() {
        var budget = LargeMessageBudget<String>()
        let size = 16 * Self.mebibyte
        for owner in ["a", "b", "c", "d"] {
            #expect(budget.reserve(size, for: owner, within: Self.limits) == .admitted)
        }
        #expect(budget.total == 64 * Self.mebibyte)
        #expect(
            budget.reserve(size, for: "e", within: Self.limits)
                == .overTotal(held: 64 * Self.mebibyte, limit: 64 * Self.mebibyte)
        )
        #expect(
            budget.reserve(size, for: "a", within: Self.limits)
                == .overTotal(held: 64 * Self.mebibyte, limit: 64 * Self.mebibyte)
        )
        #expect(budget.held(by: "e") == 0, "a refused message counts nothing")
        budget.release(size, for: "c")
        #expect(budget.reserve(size, for: "e", within: Self.limits) == .admitted)
        #expect(budget.total == 64 * Self.mebibyte)
    }

    @Test("released messages leave nothing behind: no owner is kept, the total goes back to zero")
    func releaseAll() {
        var budget = LargeMessageBudget<Int>()
        let limits = LargeMessageBudget<Int>.Limits(perOwner: 100, total: 1_000, largestMessage: 10)
        for owner in 0..<10 {
            #expect(budget.reserve(60, for: owner, within: limits) == .admitted)
            #expect(budget.reserve(40, for: owner, within: limits) == .admitted)
        }
        #expect(budget.owners == 10)
        for owner in 0..<10 {
            budget.release(40, for: owner)
            budget.release(60, for: owner)
        }
        #expect(budget.owners == 0)
        #expect(budget.total == 0)
    }

    @Test("limits below the largest message are raised to hold one: such a message is never refused for ever")
    func limitsHoldOneMessage() {
        let limits = LargeMessageBudget<String>.Limits(perOwner: 1, total: 2, largestMessage: 16 * Self.mebibyte)
        #expect(limits.perOwner == 16 * Self.mebibyte)
        #expect(limits.total == 16 * Self.mebibyte)
        var budget = LargeMessageBudget<String>()
        #expect(budget.reserve(16 * Self.mebibyte, for: "a", within: limits) == .admitted)
        #expect(
            budget.reserve(16 * Self.mebibyte, for: "b", within: limits)
                == .overTotal(held: 16 * Self.mebibyte, limit: 16 * Self.mebibyte)
        )
    }

    @Test("an owner judged by a smaller total than the others' is refused while the process holds more than it")
    func ownersWithOtherTotals() {
        var budget = LargeMessageBudget<String>()
        let generous = LargeMessageBudget<String>.Limits(perOwner: 100, total: 300, largestMessage: 10)
        let strict = LargeMessageBudget<String>.Limits(perOwner: 100, total: 150, largestMessage: 10)
        #expect(budget.reserve(100, for: "a", within: generous) == .admitted)
        #expect(budget.reserve(100, for: "b", within: generous) == .admitted)
        #expect(budget.reserve(10, for: "c", within: strict) == .overTotal(held: 200, limit: 150))
        #expect(budget.reserve(10, for: "c", within: generous) == .admitted)
    }
}
