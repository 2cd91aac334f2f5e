import NIOCore

/// Exactly-once bookkeeping of the reliable messages on one link between two peers, across the
/// connections that carry it (reconnection), as a pure value.
///
/// Messages are numbered implicitly: the n-th DATA frame a side sends on the link (counting from 0
/// since the link was established, across resumed connections) is message n. The receiver counts
/// what it received (``nextExpected``) and acknowledges it cumulatively (ACK), in batches; the sender
/// keeps every message not acknowledged yet (``unconfirmedCount``, ``retainedBytes``), so that after a
/// drop it can send again exactly those the receiver lacks (``resume(peerExpects:)``). A new
/// connection starts numbering where the receiver said it is, so nothing arrives twice.
package struct DeliveryLedger<Message> {
    /// What the owner must do after a message arrives.
    package enum IncomingAction: Equatable {
        /// Deliver it.
        case deliver
        /// Deliver it, and arm the ACK timer: it is the first message since the last ACK, and fewer
        /// than a batch may follow. When the timer fires, ``ackDue()`` says what to acknowledge.
        case deliverAndArmAckTimer
        /// Deliver it and send ACK with this count.
        case deliverAndAck(UInt64)
    }

    /// Why a count from the peer cannot be right: the link is broken beyond repair.
    package struct Violation: Error, Equatable, CustomStringConvertible {
        /// What was wrong.
        package let description: String
    }

    private var retained = CircularBuffer<(message: Message, bytes: Int)>()
    /// The number of the oldest retained message (everything below it was acknowledged).
    private(set) package var firstUnconfirmed: UInt64 = 0
    /// The number the next message sent gets.
    private(set) package var nextToSend: UInt64 = 0
    /// Bytes of the retained messages.
    private(set) package var retainedBytes = 0
    /// Whether messages are kept until acknowledged; `false` once the peer turned out not to resume
    /// (then only the numbering goes on).
    private(set) package var retaining = true

    /// The number of the next message expected from the peer (how many arrived).
    private(set) package var nextExpected: UInt64 = 0
    private var acknowledged: UInt64 = 0
    private var bytesSinceAck = 0
    /// Whether the owner's ACK timer is armed (``IncomingAction/deliverAndArmAckTimer`` was returned and
    /// neither ``ackDue()`` nor ``resumed()`` has been called since).
    private var ackTimerArmed = false
    private let ackEveryMessages: Int
    private let ackEveryBytes: Int

    /// Makes the ledger of a link just established.
    ///
    /// - Parameters:
    ///   - ackEveryMessages: an ACK is due once this many messages arrived since the last one.
    ///   - ackEveryBytes: an ACK is due once this many bytes arrived since the last one.
    package init(ackEveryMessages: Int = 64, ackEveryBytes: Int = 256 << 10) {
        self.ackEveryMessages = max(1, ackEveryMessages)
        self.ackEveryBytes = max(1, ackEveryBytes)
    }

    /// How many messages sent are not confirmed by the peer.
    package var unconfirmedCount: Int { retained.count }

    // MARK: - Sending

    /// A message goes out (or is queued for when the link is back): numbers it and keeps it until
    /// the peer confirms it.
    ///
    /// - Parameters:
    ///   - message: what to keep for sending again.
    ///   - bytes: its size, counted in ``retainedBytes``.
    /// - Returns: its number.
    package mutating func sent(_ message: Message, bytes: Int) -> UInt64 {
        let number = nextToSend
        nextToSend += 1
        if retaining {
            retained.append((message, bytes))
            retainedBytes += bytes
        } else {
            firstUnconfirmed = nextToSend
        }
        return number
    }

    /// The peer will never resume (it has no reconnection): drop what is kept and keep nothing more.
    package mutating func stopRetaining() {
        retaining = false
        retained.removeAll()
        retainedBytes = 0
        firstUnconfirmed = nextToSend
    }

    /// The peer confirmed every message below `count`: forget them.
    ///
    /// - Parameter count: the ACK's count.
    /// - Returns: how many messages were released.
    /// - Throws: ``Violation`` when `count` exceeds the messages sent.
    package mutating func acknowledged(upTo count: UInt64) throws(Violation) -> Int {
        guard count <= nextToSend else {
            throw Violation(description: "ACK of \(count) messages, but only \(nextToSend) were sent")
        }
        return release(below: count)
    }

    /// A new connection carries the link: drop what the peer already has, and return the messages
    /// to send again, in order (they stay kept until confirmed).
    ///
    /// - Parameter count: the number of the next message the peer expects (RESUME / RESUMED).
    /// - Returns: the messages numbered `count` and above.
    /// - Throws: ``Violation`` when the peer claims more than was sent, or less than it confirmed.
    package mutating func resume(peerExpects count: UInt64) throws(Violation) -> [Message] {
        guard count <= nextToSend else {
            throw Violation(description: "the peer expects message \(count), but only \(nextToSend) were sent")
        }
        guard retaining || count == nextToSend else {
            throw Violation(description: "the peer lacks messages from \(count), which were not kept")
        }
        guard count >= firstUnconfirmed else {
            throw Violation(
                description: "the peer expects message \(count), below \(firstUnconfirmed) which it confirmed"
            )
        }
        release(below: count)
        return retained.map(\.message)
    }

    /// The link is given up: every message not confirmed, in order; the ledger keeps none.
    ///
    /// - Returns: the unconfirmed messages.
    package mutating func abandon() -> [Message] {
        let messages = retained.map(\.message)
        retained.removeAll()
        retainedBytes = 0
        firstUnconfirmed = nextToSend
        return messages
    }

    @discardableResult
    private mutating func release(below count: UInt64) -> Int {
        var released = 0
        while firstUnconfirmed < count, let first = retained.popFirst() {
            retainedBytes -= first.bytes
            firstUnconfirmed += 1
            released += 1
        }
        firstUnconfirmed = max(firstUnconfirmed, count)
        return released
    }

    // MARK: - Receiving

    /// A reliable message arrived from the peer.
    ///
    /// - Parameter bytes: its size.
    /// - Returns: deliver it, with an ACK when one is due.
    package mutating func received(bytes: Int) -> IncomingAction {
        nextExpected += 1
        bytesSinceAck += bytes
        guard nextExpected - acknowledged >= UInt64(ackEveryMessages) || bytesSinceAck >= ackEveryBytes else {
            guard !ackTimerArmed else { return .deliver }
            ackTimerArmed = true
            return .deliverAndArmAckTimer
        }
        acknowledged = nextExpected
        bytesSinceAck = 0
        return .deliverAndAck(nextExpected)
    }

    /// The ACK timer fired: the count to acknowledge, if messages arrived since the last ACK. The timer
    /// is disarmed; the next message that leaves an ACK owed arms it again.
    package mutating func ackDue() -> UInt64? {
        ackTimerArmed = false
        guard nextExpected > acknowledged else { return nil }
        acknowledged = nextExpected
        bytesSinceAck = 0
        return nextExpected
    }

    /// A new connection carries the link: the peer will say what it has received on its own, so the
    /// count it was last told no longer matters. Call once the resume handshake is done.
    package mutating func resumed() {
        acknowledged = nextExpected
        bytesSinceAck = 0
        ackTimerArmed = false
    }
}

extension DeliveryLedger: Sendable where Message: Sendable {}
