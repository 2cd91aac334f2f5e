/// Whose turn it is to send a large message on a connection: one at a time, in the order their senders
/// asked (so that large messages arrive in the order their `send`s began), and a sender that gives up while
/// it waits leaves the line without ever holding the turn.
///
/// Pure: the connection keeps one under its lock beside the waiting senders' continuations, keyed by their
/// tickets, and resumes the ones it names after unlocking.
package struct LargeMessageTurns: Sendable {
    /// What a sender that asks is told.
    package enum Answer: Sendable, Hashable {
        /// The turn is its own now; it gives it back with ``LargeMessageTurns/pass()``.
        case go
        /// Another holds the turn: it waits in line until ``LargeMessageTurns/pass()`` names it.
        case wait
    }

    private var taken = false
    /// The tickets of the senders waiting, in the order they asked.
    private var line: [UInt64] = []
    private var lastTicket: UInt64 = 0

    /// Makes turns that nobody holds.
    package init() {}

    /// How many senders wait in line.
    package var waiting: Int { line.count }

    /// A number for a sender about to ask, never given before by these turns: it names the sender when it
    /// asks, leaves, or is handed the turn.
    package mutating func ticket() -> UInt64 {
        lastTicket += 1
        return lastTicket
    }

    /// The sender of `ticket` asks for the turn.
    ///
    /// - Parameter ticket: from ``ticket()``; asked with once.
    /// - Returns: ``Answer/go`` when nobody held the turn, else ``Answer/wait`` (it is at the end of the line).
    package mutating func ask(_ ticket: UInt64) -> Answer {
        guard taken else {
            taken = true
            return .go
        }
        line.append(ticket)
        return .wait
    }

    /// The sender of `ticket` gives up.
    ///
    /// - Parameter ticket: its ticket.
    /// - Returns: whether it was waiting in line (it has left it: fail its wait); false when it has not asked
    ///   yet, or was handed the turn already (then it gives the turn back with ``pass()``).
    package mutating func leave(_ ticket: UInt64) -> Bool {
        guard let index = line.firstIndex(of: ticket) else { return false }
        line.remove(at: index)
        return true
    }

    /// The holder is done (its message was sent, failed or was given up).
    ///
    /// - Returns: the ticket of the sender the turn passes to, the first in line (resume its wait); nil when
    ///   nobody waits, and nobody holds the turn any more.
    package mutating func pass() -> UInt64? {
        guard !line.isEmpty else {
            taken = false
            return nil
        }
        return line.removeFirst()
    }

    /// The connection has closed: every sender in line leaves it.
    ///
    /// - Returns: their tickets, in line order (fail their waits).
    package mutating func close() -> [UInt64] {
        defer { line.removeAll() }
        return line
    }
}
