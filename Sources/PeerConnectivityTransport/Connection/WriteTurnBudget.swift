import NIOCore

/// Decides how many bytes of channel frames the connections of one event loop may write before the loop polls
/// its sockets again, and when connections that found no room go on.
///
/// SwiftNIO runs the tasks queued on an event loop, and the scheduled ones that came due meanwhile, until none is
/// left before it polls its sockets again. A writer that runs on the loop (a task preferring
/// `Session.taskExecutor`) and the drains it queues keep each other going, task after task, for as long as credit
/// and the socket allow: on loopback or a fast link, many megabytes, during which every connection of that loop,
/// this one's reads included, waits. With this budget the loop's connections write at most ``limit`` bytes of
/// channel frames between two polls; a connection that finds none left waits until the loop has polled (its shell
/// learns that from a read), which it does once nothing else is queued. Messages and control frames never wait
/// for it.
package struct WriteTurnBudget: Sendable, Hashable {
    /// What the loop's shell does after a call.
    package enum Action: Sendable, Hashable {
        /// Nothing.
        case none
        /// Arrange to learn of the loop's next poll (call ``WriteTurnBudget/polled()`` then), or, where the shell
        /// cannot, to call ``WriteTurnBudget/woke()`` after ``WriteTurnBudget/wakeAfter``.
        case scheduleWake
        /// Queue ``WriteTurnBudget/resumed()`` and the waiting connections' drains behind the reads being handled.
        case resumeWaiting
    }

    /// Bytes of channel frames between two polls by default: a 1 MiB batch, a millisecond or less here.
    package static let defaultLimit = 1 << 20
    /// How long waiting connections wait for a fresh turn where the loop's shell cannot learn of a poll otherwise
    /// (an embedded loop in a test). A timer alone does not ensure a poll: one that comes due while tasks still
    /// run is run with them.
    package static let wakeAfter = TimeAmount.milliseconds(1)

    /// Bytes of channel frames a turn allows.
    package let limit: Int
    /// Bytes of channel frames written in this turn.
    package private(set) var spent = 0
    /// Some connection found no room and waits.
    private var waiting = false
    /// A wake is scheduled.
    private var wakeScheduled = false
    /// A resume is queued.
    private var resumeQueued = false

    /// A budget of `limit` bytes a turn.
    ///
    /// - Parameter limit: bytes; 1 at least.
    package init(limit: Int = WriteTurnBudget.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// Bytes of channel frames a drain may still write in this turn (the frame that crosses it goes whole).
    package var room: Int { max(0, limit - spent) }

    /// Nothing written in this turn and nobody waiting: a poll changes nothing (the case of every read while
    /// only messages go, checked before ``polled()`` on that path).
    package var isFresh: Bool { spent == 0 && !waiting }

    /// A drain wrote `bytes` of channel frames.
    ///
    /// - Parameter bytes: the bytes.
    package mutating func wrote(_ bytes: Int) {
        spent += bytes
    }

    /// A connection found no room: it waits for a fresh turn.
    ///
    /// - Returns: ``Action/scheduleWake`` for the first to wait; otherwise ``Action/none``.
    package mutating func wait() -> Action {
        waiting = true
        guard !wakeScheduled, !resumeQueued else { return .none }
        wakeScheduled = true
        return .scheduleWake
    }

    /// A connection of the loop read: the loop polled, and a fresh turn begins.
    ///
    /// - Returns: ``Action/resumeWaiting`` when connections wait and no resume is queued yet.
    package mutating func polled() -> Action {
        spent = 0
        guard waiting, !resumeQueued else { return .none }
        resumeQueued = true
        return .resumeWaiting
    }

    /// The wake came: a fresh turn.
    ///
    /// - Returns: whether the waiting connections go on now (not when a queued resume will do it).
    package mutating func woke() -> Bool {
        wakeScheduled = false
        spent = 0
        guard waiting, !resumeQueued else { return false }
        waiting = false
        return true
    }

    /// The queued resume runs: the waiting connections go on.
    ///
    /// - Returns: whether a wake is still scheduled, which the shell cancels.
    package mutating func resumed() -> Bool {
        resumeQueued = false
        waiting = false
        defer { wakeScheduled = false }
        return wakeScheduled
    }
}
