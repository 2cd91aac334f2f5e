import PeerConnectivityCore
import Testing

@Suite("Whose turn it is to send a large message")
struct LargeMessageTurnsTests {
    @Test("one at a time, in the order they asked; the turn is free again once the last passes it")
    func inOrder() {
        var turns = LargeMessageTurns()
        let (a, b, c) = (turns.ticket(), turns.ticket(), turns.ticket())
        #expect(turns.ask(a) == .go)
        #expect(turns.ask(b) == .wait)
        #expect(turns.ask(c) == .wait)
        #expect(turns.waiting == 2)
        #expect(turns.pass() == b)
        #expect(turns.pass() == c)
        #expect(turns.pass() == nil)
        let d = turns.ticket()
        #expect(turns.ask(d) == .go, "nobody held the turn")
    }

    @Test("given up while queued: it leaves the line, is never handed the turn, and the others keep their order")
    func leaveWhileQueued() {
        var turns = LargeMessageTurns()
        let (a, b, c, d) = (turns.ticket(), turns.ticket(), turns.ticket(), turns.ticket())
        #expect(turns.ask(a) == .go)
        for ticket in [b, c, d] { #expect(turns.ask(ticket) == .wait) }
        #expect(turns.leave(c) == true)
        #expect(turns.leave(c) == false, "only once")
        #expect(turns.waiting == 2)
        #expect(turns.pass() == b)
        #expect(turns.pass() == d)
        #expect(turns.pass() == nil)
    }

    @Test("given up while holding the turn, or before asking: not in line; the holder passes the turn on")
    func leaveWhileHolding() {
        var turns = LargeMessageTurns()
        let (a, b, c) = (turns.ticket(), turns.ticket(), turns.ticket())
        #expect(turns.leave(c) == false, "it has not asked yet: its sender fails before asking")
        #expect(turns.ask(a) == .go)
        #expect(turns.ask(b) == .wait)
        #expect(turns.leave(a) == false, "the holder is not in line")
        #expect(turns.pass() == b, "the holder's sender gives the turn back, to the next")
        #expect(turns.leave(b) == false, "handed the turn: it gives it back when it has stopped")
        #expect(turns.pass() == nil)
    }

    @Test("the last in line leaving while the holder finishes: the turn ends free, not held by the one gone")
    func lastLeaves() {
        var turns = LargeMessageTurns()
        let (a, b) = (turns.ticket(), turns.ticket())
        #expect(turns.ask(a) == .go)
        #expect(turns.ask(b) == .wait)
        #expect(turns.leave(b) == true)
        #expect(turns.pass() == nil)
        let c = turns.ticket()
        #expect(turns.ask(c) == .go)
    }

    @Test("the connection closes: everyone in line is named once, in order; the holder still passes")
    func close() {
        var turns = LargeMessageTurns()
        let tickets = (0..<4).map { _ in turns.ticket() }
        #expect(Set(tickets).count == 4, "tickets are never given twice")
        #expect(turns.ask(tickets[0]) == .go)
        for ticket in tickets.dropFirst() { #expect(turns.ask(ticket) == .wait) }
        #expect(turns.close() == Array(tickets.dropFirst()))
        #expect(turns.close().isEmpty)
        #expect(turns.waiting == 0)
        #expect(turns.pass() == nil)
    }
}
