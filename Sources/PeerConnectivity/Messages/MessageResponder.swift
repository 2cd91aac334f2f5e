import Foundation

/// Answers messages where the session reads them, before they reach ``Session/events``: set as
/// ``Session/Configuration/messageResponder``.
///
/// A session delivers each message through its event stream, to a task that reads it; an answer sent from
/// there waits for that task to be scheduled and for its `send`. A responder is called on the connection's
/// event loop as the message is read, and its ``MessageResponse/reply(_:)`` is written with the other
/// replies of the same read, with no task in between: what an echo server or a request/response protocol
/// needs for its round trip to cost what the connection costs.
///
/// ```swift
/// var configuration = Session.Configuration.default
/// configuration.messageResponder = MessageResponder { data, peer, mode in
///     data.first == 0x01 ? .reply(data) : .deliver
/// }
/// ```
///
/// The rules, since the closure runs where the session reads:
/// - It is called once per message (reliable, large, unreliable), in the order each peer's messages
///   arrive, from one of the session's event loop threads: it must return quickly and never block or
///   wait. What it shares with other code needs a lock or an atomic.
/// - A reliable reply of at most 1 MiB is queued on the sender's connection before the next message is
///   read, so replies leave in the order their messages came; a larger one is sent as a large message,
///   in a task (it may arrive after replies sent later, as large messages do). While more replies wait
///   to be written than the connection's outbound queue holds, the session reads nothing more from that
///   peer.
/// - An unreliable reply goes as ``SendMode/unreliable`` does: it may be dropped.
/// - A reply the session could not send (larger than ``Session/Configuration/maximumMessageLength``
///   or than the peer accepts, or the peer gone) is logged to the session's logger and dropped: no
///   `send` is there to throw to.
/// - A session with ``Session/Configuration/reconnection`` does not call its responder (a reply would
///   need the resend ledger's room, which may mean waiting): every message goes to ``Session/events``.
public struct MessageResponder: Sendable {
    /// The closure: the message, its sender and the mode it came in; what to do with it.
    public let respond: @Sendable (_ message: Data, _ peer: PeerID, _ mode: SendMode) -> MessageResponse

    /// A responder that calls `respond` for each message.
    ///
    /// - Parameter respond: called on an event loop thread for each message, with the peer that sent it and
    ///   the mode it came in; returns whether it is delivered, consumed or answered.
    public init(_ respond: @escaping @Sendable (_ message: Data, _ peer: PeerID, _ mode: SendMode) -> MessageResponse) {
        self.respond = respond
    }
}
