extension ConnectionStateMachine {
    /// The keepalive timer fired: send a KEEPALIVE, or give up on a silent peer.
    package mutating func keepaliveTick() -> Action {
        guard case .established(let established) = state else { return .none }
        if !isReadingPaused {
            ticksSinceIncoming += 1
        }
        let silence = keepaliveInterval.nanoseconds * Int64(ticksSinceIncoming)
        if silence >= livenessTimeout.nanoseconds {
            let seconds = Double(silence) / 1e9
            let reason = DisconnectReason.livenessTimeout.with(detail: "nothing received for \(seconds) s")
            let action = Action.close(reason, sending: .goodbye(reason))
            settle(established, after: action)
            return action
        }
        return .send([.keepalive])
    }

    /// The owner stopped or resumed reading from the socket (receive backpressure); silence while
    /// paused is our doing, not the peer's, so it does not count toward the liveness timeout.
    ///
    /// - Parameter paused: whether reading is paused.
    package mutating func readingPaused(_ paused: Bool) {
        isReadingPaused = paused
    }

    /// The largest message this side accepts on the connection, as it announced it (or as the link's first
    /// connection did): a message channel the peer opens with a larger size is refused.
    ///
    /// - Parameter length: the limit, in bytes.
    package mutating func acceptMessages(upTo length: Int) {
        guard case .established(var established) = state else { return }
        state = .modifying
        established.channels.maximumMessageLength = length
        state = .established(established)
    }

    /// This side's reader consumed bytes of a channel the peer opened: let the peer send as many more.
    ///
    /// - Parameters:
    ///   - increment: bytes consumed.
    ///   - channel: the channel.
    /// - Returns: the CREDIT to send, or nothing when the channel or the connection has ended.
    package mutating func grantCredit(_ increment: Int, on channel: UInt32) -> Action {
        guard case .established(var established) = state else { return .none }
        state = .modifying
        let action = established.grantCredit(increment, on: channel)
        state = .established(established)
        return action
    }

    /// This side ends a channel the peer opened (its reader stopped, or it cannot keep the data, even
    /// after END: a resource whose digest did not match).
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - code: why, sent to the peer.
    /// - Returns: the RESET to send, or nothing when the connection has ended or the peer never opened it.
    package mutating func resetIncomingChannel(_ channel: UInt32, _ code: ChannelResetCode) -> Action {
        guard case .established(var established) = state else { return .none }
        state = .modifying
        let action = established.resetIncomingChannel(channel, code)
        state = .established(established)
        return action
    }
}
