import NIOCore
import PeerConnectivityTransport
import Testing

/// The budget of channel-frame bytes an event loop's connections write between two polls: how much room it
/// leaves, and when the connections that found none go on.
@Suite("The event loop's write turn")
struct WriteTurnBudgetTests {
    private static let wake = WriteTurnBudget.Action.scheduleWake

    @Test("the room shrinks by what the drains wrote, to none, and a poll gives a whole turn again")
    func room() {
        var budget = WriteTurnBudget(limit: 1_000)
        #expect(budget.room == 1_000 && budget.isFresh)
        budget.wrote(600)
        #expect(!budget.isFresh, "a poll now starts a fresh turn")
        #expect(budget.room == 400)
        // The frame that crosses the limit goes whole: the room is then none, not negative.
        budget.wrote(700)
        #expect(budget.room == 0)
        #expect(budget.spent == 1_300)
        let polled = budget.polled()
        #expect(polled == .none, "nobody waits: nothing to resume")
        #expect(budget.room == 1_000 && budget.isFresh)
        #expect(WriteTurnBudget(limit: 0).limit == 1)
        #expect(WriteTurnBudget().limit == WriteTurnBudget.defaultLimit)
    }

    @Test("the first connection to wait asks for the wake; the next ones ride on it")
    func oneWake() {
        var budget = WriteTurnBudget(limit: 1_000)
        budget.wrote(1_000)
        let first = budget.wait()
        let second = budget.wait()
        #expect(first == Self.wake)
        #expect(second == .none)
        let woke = budget.woke()
        #expect(woke, "the wake resumes them")
        #expect(budget.room == 1_000)
        // A later wait asks for a wake of its own.
        budget.wrote(1_000)
        let later = budget.wait()
        #expect(later == Self.wake)
    }

    @Test("a poll before the wake queues one resume, which cancels the wake; the wake then resumes nobody")
    func pollFirst() {
        var budget = WriteTurnBudget(limit: 1_000)
        budget.wrote(2_000)
        let waited = budget.wait()
        #expect(waited == Self.wake)
        let first = budget.polled()
        #expect(budget.spent == 0 && !budget.isFresh, "nothing spent, but connections wait for the resume")
        let second = budget.polled()
        #expect(first == .resumeWaiting)
        #expect(second == .none, "one resume at a time")
        // Waiting again before the resume ran: the queued resume takes it along, no second wake.
        let again = budget.wait()
        #expect(again == .none)
        let cancel = budget.resumed()
        #expect(cancel, "the wake is still asked for: cancel it")
        let woke = budget.woke()
        #expect(!woke, "a wake that comes anyway resumes nobody")
        let after = budget.polled()
        #expect(after == .none, "nobody waits after the resume")
    }

    @Test("a wake that comes while a resume is queued leaves the resuming to it")
    func wakeWhileResumeQueued() {
        var budget = WriteTurnBudget(limit: 1_000)
        budget.wrote(1_000)
        _ = budget.wait()
        let polled = budget.polled()
        #expect(polled == .resumeWaiting)
        let woke = budget.woke()
        #expect(!woke)
        let cancel = budget.resumed()
        #expect(!cancel, "the wake already came: nothing to cancel")
        let after = budget.polled()
        #expect(after == .none)
    }
}
