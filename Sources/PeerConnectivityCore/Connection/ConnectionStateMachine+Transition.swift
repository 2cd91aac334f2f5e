extension ConnectionStateMachine {
    /// What an event does in the handshake or while securing: the action, and where the machine goes.
    enum Transition {
        /// The state stays (with the changes the event made to it).
        case stay(Action)
        /// The machine moves to another state.
        case move(State, Action)
        /// The connection closes: the machine moves to closing (which keeps `peer` and `reason`) and
        /// the handler writes `frame`, if any, then closes the channel.
        case close(DisconnectReason, sending: Frame?, peer: PeerID?)

        /// Closes with a GOODBYE that says why.
        static func goodbye(_ reason: DisconnectReason, peer: PeerID?) -> Transition {
            .close(reason, sending: .goodbye(reason), peer: peer)
        }

        /// Closes without a frame.
        static func quietly(_ reason: DisconnectReason, peer: PeerID?) -> Transition {
            .close(reason, sending: nil, peer: peer)
        }
    }
}
