/// What the writer side of one channel (one this side opened) knows: its credit, what waits in the
/// bulk queue, and who is suspended on it. Kept by ``OutgoingChannelTable``.
struct OutgoingChannel<Waiter> {
    /// Bytes the peer lets this side send before more CREDIT.
    var credit = WireProtocol.initialChannelWindow
    /// Bytes of this channel's frames in the bulk queue.
    var queuedBytes = 0
    /// Whether the OPEN frame has left the queue (so the peer knows the channel, and a RESET must follow).
    var openWritten = false
    /// A resource: its record stays after END, until the peer's DONE or RESET.
    var awaitsDone: Bool
    /// The writer, suspended until there is credit and room in the queue.
    var writer: Waiter?
    /// The payload length the suspended writer waits to queue.
    var writerNeeds = 0
    /// The resource's sender, suspended until DONE.
    var doneWaiter: Waiter?
    /// DONE arrived before anyone waited for it.
    var isDone = false
    /// A resource: the peer's HAVE, once it has come.
    var have: Frame.Have?
    /// The resource's sender, suspended until HAVE.
    var haveWaiter: Waiter?
    /// The peer reset the channel: kept until the owner sees it (its next call throws it) and
    /// lets go of the channel with ``OutgoingChannelTable/reset(_:)``.
    var failure: ChannelClosedError?

    init(awaitsDone: Bool) {
        self.awaitsDone = awaitsDone
    }

    /// Whether a chunk of `payloadLength` bytes may be queued now.
    func canQueue(payloadLength: Int, queueLimit: Int) -> Bool {
        credit >= payloadLength && queuedBytes < queueLimit
    }

    /// Everyone suspended on this channel.
    var waiters: [Waiter] {
        [writer, doneWaiter, haveWaiter].compactMap { $0 }
    }
}
