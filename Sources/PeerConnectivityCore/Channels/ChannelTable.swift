import NIOCore

/// The channels (streams, resources and large messages) of one connection, as this side sees the frames about them:
/// which channels the peer has open, how many bytes each may still send, and the numbering rules.
///
/// Pure, like ``ConnectionStateMachine``, which owns one once the connection is established.
/// Channels this side opened are tracked by the writer (their credit); here they only need the
/// numbering rule: the inviter numbers its channels odd, the invitee even, so both can open at once.
///
/// Frames that arrive for a channel that has already ended (a CHUNK after this side reset it, a
/// CREDIT after the writer finished) are dropped, but for RESET, which the owner judges: both sides
/// may end a channel at the same moment.
/// Frames for a channel the peer never opened break the protocol.
///
/// A resource's bytes come in blocks: a BLOCK frame names the block, then CHUNKs carry exactly its
/// length. A CHUNK outside a block, a BLOCK before the last one is whole or past the resource's end,
/// and an END in the middle of a block break the protocol. The blocks may come in any order, and
/// not all of them: those the receiver said it holds (HAVE) are not sent again.
///
/// A folder channel (``ChannelKind/folder``) follows the same rules as a resource: its blocks cut the
/// folder stream, not a file.
///
/// A message channel (``ChannelKind/message``) announces its size at OPEN: one larger than
/// ``maximumMessageLength`` is refused there (RESET, too large), and bytes past the size or an END
/// before it break the protocol, so that the receiver never holds more than the size it accepted.
package struct ChannelTable {
    /// What the owner must do after a channel frame.
    package enum Action: Equatable {
        /// Nothing (a late frame for a channel that has ended).
        case none
        /// The peer opened a channel: hand it to the application.
        case opened(Frame.Open)
        /// The peer opened a channel this side does not take (beyond the channel limit, or a message
        /// over the size limit): answer RESET with `code`; `reason` says why, for the log.
        case refuse(channel: UInt32, ChannelResetCode, reason: String)
        /// Bytes on a channel the peer opened.
        case received(channel: UInt32, ByteBuffer)
        /// The peer finished a channel it opened.
        case ended(channel: UInt32, digest: [UInt8]?)
        /// The peer ended a channel early (one it opened, or one this side opened).
        case reset(channel: UInt32, ChannelResetCode)
        /// The peer lets this side send more on a channel this side opened.
        case credited(channel: UInt32, increment: UInt32)
        /// The peer checked and kept a resource this side sent.
        case done(channel: UInt32)
        /// The peer starts block `index` of a resource it sends; its digest (``BlockHasher``) is `digest`.
        case block(channel: UInt32, index: Int, digest: [UInt8])
        /// The peer says which blocks of a resource this side sends it holds already.
        case have(channel: UInt32, Frame.Have)
        /// The frame breaks the protocol: close the connection.
        case violation(ProtocolError)
    }

    private struct Inbound {
        var kind: ChannelKind
        /// Bytes the peer may still send before it needs more credit.
        var window: Int
        /// A message's bytes still due before its END; `nil` for a stream or a resource.
        var remaining: UInt64?
        /// A resource's blocks; `nil` for a stream or a message.
        var layout: ResourceLayout?
        /// Bytes of the current block still due; 0 between blocks.
        var blockRemaining = 0
    }

    private var inbound: [UInt32: Inbound] = [:]
    private var highestPeerChannel: UInt32 = 0
    private let peerParity: UInt32
    /// How many channels the peer may have open at once; more are refused.
    package let maximumIncomingChannels: Int
    /// How many message channels the peer may have open at once; more are refused (RESET 8, busy). A
    /// sender of this library sends one large message at a time per connection; two leave room for a
    /// peer that opens the next as it ends one. So a connection holds at most twice the largest message.
    package static let maximumIncomingMessages = 2
    /// The largest message this side accepts on the connection (what it announced): a message channel
    /// whose OPEN announces more is refused.
    package var maximumMessageLength: Int

    /// Makes the table of a new connection.
    ///
    /// - Parameters:
    ///   - localIsInviter: whether this side dialled (and numbers its channels odd).
    ///   - maximumIncomingChannels: how many channels the peer may have open at once.
    ///   - maximumMessageLength: the largest message this side accepts.
    package init(
        localIsInviter: Bool,
        maximumIncomingChannels: Int,
        maximumMessageLength: Int = WireProtocol.defaultMaximumMessageLength
    ) {
        self.peerParity = localIsInviter ? 0 : 1
        self.maximumIncomingChannels = maximumIncomingChannels
        self.maximumMessageLength = maximumMessageLength
    }

    /// The first channel number this side uses; each next one is 2 more.
    ///
    /// - Parameter localIsInviter: whether this side dialled.
    /// - Returns: 1 for the inviter, 2 for the invitee.
    package static func firstLocalChannel(localIsInviter: Bool) -> UInt32 {
        localIsInviter ? 1 : 2
    }

    /// How many channels the peer has open now.
    package var inboundCount: Int { inbound.count }

    /// How many of them carry blocks (resources and folders): the channels whose bytes wait for the
    /// file queue, held in the reads they came in, rather than being taken as they arrive.
    package private(set) var inboundBlockChannels = 0

    /// The window left on a channel the peer opened, or `nil` if it is not open.
    ///
    /// - Parameter channel: the channel.
    /// - Returns: bytes the peer may still send.
    package func window(of channel: UInt32) -> Int? {
        inbound[channel]?.window
    }

    /// A channel frame arrived from the peer.
    ///
    /// - Parameter frame: OPEN, CHUNK, END, RESET, CREDIT, DONE, BLOCK or HAVE.
    /// - Returns: what to do.
    package mutating func frameReceived(_ frame: Frame) -> Action {
        switch frame {
        case .open(let open):
            guard isPeers(open.channel) else { return wrongSide(.open, open.channel) }
            guard open.channel > highestPeerChannel else {
                return .violation(
                    .malformed(.open, "channel \(open.channel) is not above \(highestPeerChannel), the last one opened")
                )
            }
            highestPeerChannel = open.channel
            guard inbound.count < maximumIncomingChannels else {
                let reason = "\(maximumIncomingChannels) channels are open already"
                return .refuse(channel: open.channel, .refused, reason: reason)
            }
            var entry = Inbound(kind: open.kind, window: WireProtocol.initialChannelWindow)
            if open.kind == .message {
                guard inbound.values.count(where: { $0.kind == .message }) < Self.maximumIncomingMessages else {
                    let reason = "\(Self.maximumIncomingMessages) messages are arriving already"
                    return .refuse(channel: open.channel, .busy, reason: reason)
                }
                guard open.size <= UInt64(maximumMessageLength) else {
                    let reason = "a message of \(open.size) bytes; this side accepts at most \(maximumMessageLength)"
                    return .refuse(channel: open.channel, .tooLarge, reason: reason)
                }
                entry.remaining = open.size
            }
            if open.kind.hasBlocks {
                let layout = ResourceLayout(size: open.size)
                guard layout.fitsProtocol else {
                    let reason =
                        "a \(open.kind) of \(open.size) bytes; at most \(WireProtocol.maximumResourceBlocks) blocks"
                    return .refuse(channel: open.channel, .tooLarge, reason: reason)
                }
                entry.layout = layout
            }
            inbound[open.channel] = entry
            if open.kind.hasBlocks { inboundBlockChannels += 1 }
            return .opened(open)

        case .chunk(let channel, let bytes):
            guard isPeers(channel) else { return wrongSide(.chunk, channel) }
            guard var entry = inbound[channel] else { return lateOrUnknown(.chunk, channel) }
            guard bytes.readableBytes <= entry.window else {
                return .violation(
                    .malformed(
                        .chunk,
                        "\(bytes.readableBytes) bytes on channel \(channel) exceed its window of \(entry.window)"
                    )
                )
            }
            if entry.layout != nil {
                guard bytes.readableBytes <= entry.blockRemaining else {
                    return .violation(
                        .malformed(
                            .chunk,
                            "\(bytes.readableBytes) bytes on resource channel \(channel), \(entry.blockRemaining) left of its block"
                        )
                    )
                }
                entry.blockRemaining -= bytes.readableBytes
            }
            if let remaining = entry.remaining {
                guard bytes.readableBytes <= remaining else {
                    return .violation(
                        .malformed(
                            .chunk,
                            "\(bytes.readableBytes) bytes on message channel \(channel), \(remaining) left of its size"
                        )
                    )
                }
                entry.remaining = remaining - UInt64(bytes.readableBytes)
            }
            entry.window -= bytes.readableBytes
            inbound[channel] = entry
            return .received(channel: channel, bytes)

        case .end(let channel, let digest):
            guard isPeers(channel) else { return wrongSide(.end, channel) }
            guard let entry = removeInbound(channel) else { return lateOrUnknown(.end, channel) }
            if entry.kind.hasBlocks != (digest != nil) {
                return .violation(.malformed(.end, "a \(entry.kind)'s END has \(digest == nil ? "no" : "a") digest"))
            }
            if let remaining = entry.remaining, remaining > 0 {
                return .violation(
                    .malformed(.end, "message channel \(channel) ended \(remaining) bytes short of its size")
                )
            }
            if entry.blockRemaining > 0 {
                return .violation(
                    .malformed(.end, "resource channel \(channel) ended \(entry.blockRemaining) bytes short of a block")
                )
            }
            return .ended(channel: channel, digest: digest)

        case .block(let channel, let index, let digest):
            guard isPeers(channel) else { return wrongSide(.block, channel) }
            guard var entry = inbound[channel] else { return lateOrUnknown(.block, channel) }
            guard let layout = entry.layout else {
                return .violation(.malformed(.block, "channel \(channel) is a \(entry.kind), not a resource"))
            }
            guard Int(index) < layout.blockCount else {
                return .violation(
                    .malformed(.block, "block \(index) of a resource of \(layout.blockCount) blocks")
                )
            }
            guard entry.blockRemaining == 0 else {
                return .violation(
                    .malformed(.block, "block \(index) begins \(entry.blockRemaining) bytes short of the last one")
                )
            }
            entry.blockRemaining = layout.length(of: Int(index))
            inbound[channel] = entry
            return .block(channel: channel, index: Int(index), digest: digest)

        case .have(let channel, let have):
            guard !isPeers(channel) else { return wrongSide(.have, channel) }
            return .have(channel: channel, have)

        case .reset(let channel, let code):
            // Passed on even for a channel that has ended here: a resource's writer may cancel while
            // this side checks it after END.
            if isPeers(channel), removeInbound(channel) == nil, channel > highestPeerChannel {
                return .violation(.malformed(.reset, "channel \(channel) was never opened"))
            }
            return .reset(channel: channel, code)

        case .credit(let channel, let increment):
            guard !isPeers(channel) else { return wrongSide(.credit, channel) }
            return .credited(channel: channel, increment: increment)

        case .done(let channel):
            guard !isPeers(channel) else { return wrongSide(.done, channel) }
            return .done(channel: channel)

        case .hello, .invite, .accept, .decline, .pairCommit, .pairNonce, .datagramKey, .data, .keepalive, .goodbye,
            .datagramEndpoint, .sessionListener, .members, .resumeSecret, .resume, .resumed, .ack:
            preconditionFailure("\(frame.type) is not a channel frame")
        }
    }

    /// This side's reader consumed `increment` bytes of a channel the peer opened: grant them back.
    ///
    /// - Parameters:
    ///   - increment: bytes to add to the window.
    ///   - channel: the channel.
    /// - Returns: the CREDIT frame to send, or `nil` if the channel has ended.
    package mutating func grant(_ increment: Int, on channel: UInt32) -> Frame? {
        guard increment > 0, var entry = inbound[channel] else { return nil }
        let granted = min(increment, WireProtocol.maximumChannelWindow - entry.window)
        guard granted > 0 else { return nil }
        entry.window += granted
        inbound[channel] = entry
        return .credit(channel: channel, increment: UInt32(granted))
    }

    /// This side ends a channel the peer opened: its reader stopped, or the data cannot be kept
    /// (a resource whose digest did not match, after its END).
    ///
    /// - Parameters:
    ///   - channel: the channel.
    ///   - code: why.
    /// - Returns: the RESET frame to send; `nil` for a channel the peer never opened.
    package mutating func reset(_ channel: UInt32, _ code: ChannelResetCode) -> Frame? {
        guard isPeers(channel), channel <= highestPeerChannel else { return nil }
        removeInbound(channel)
        return .reset(channel: channel, code)
    }

    /// Takes a channel the peer opened out of the table, keeping ``inboundBlockChannels`` true.
    @discardableResult
    private mutating func removeInbound(_ channel: UInt32) -> Inbound? {
        guard let entry = inbound.removeValue(forKey: channel) else { return nil }
        if entry.kind.hasBlocks { inboundBlockChannels -= 1 }
        return entry
    }

    private func isPeers(_ channel: UInt32) -> Bool {
        channel & 1 == peerParity
    }

    private func wrongSide(_ type: FrameType, _ channel: UInt32) -> Action {
        let opener = isPeers(channel) ? "the peer" : "this side"
        let sender = isPeers(channel) ? "this side" : "the opener"
        return .violation(.malformed(type, "channel \(channel) was opened by \(opener); only \(sender) sends \(type)"))
    }

    private func lateOrUnknown(_ type: FrameType, _ channel: UInt32) -> Action {
        if channel <= highestPeerChannel { return .none }
        return .violation(.malformed(type, "channel \(channel) was never opened"))
    }
}
