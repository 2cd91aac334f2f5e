import Foundation

/// What a ``MessageResponder`` does with a message it was offered.
public enum MessageResponse: Sendable {
    /// The message goes on to ``Session/events`` (and ``Session/messages(of:)``), as without a responder.
    case deliver
    /// The responder has taken the message: it is not delivered, and nothing is sent back.
    case consumed
    /// The message is not delivered; this answer goes back to its sender, in the mode the message came
    /// in, as ``Session/send(_:toPeers:mode:)-(Data,_,_)`` would send it.
    case reply(Data)
}
