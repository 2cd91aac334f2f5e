/// The places an incoming resource or folder holds while it arrives: one of its session's and one of the
/// process's (``IncomingResourceSlots``).
///
/// Its receiver gives them back as it finishes, before it tells the sender (DONE or RESET): a sender that starts
/// the next one as soon as it hears must not be refused as busy for the place of the one that just ended.
struct IncomingResourcePlaces: Sendable {
    /// The session's count; the process's is ``IncomingResourceSlots/process``.
    let session: IncomingResourceSlots

    /// Gives both places back; called once, when the transfer finishes.
    func giveBack() {
        session.give()
        IncomingResourceSlots.process.give()
    }
}
