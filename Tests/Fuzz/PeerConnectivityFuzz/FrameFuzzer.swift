import Foundation
import NIOCore
import PeerConnectivityCore

/// The fuzz target: bytes from the network through ``FrameParser`` and into a ``ConnectionStateMachine``.
///
/// The first input byte chooses how to play it; the rest is what the peer sends:
/// - bit 0: this side's role (0 invitee, 1 inviter);
/// - bit 1: accept the invitation as soon as it is delivered (invitee), to reach the connected state;
/// - bits 2-3: how the bytes arrive: all at once, one at a time, 7 at a time, or in pieces whose
///   sizes are taken from the input;
/// - bit 4: fire the keepalive timer after every frame; bit 5: fire the handshake deadline at the end;
/// - bit 6: this side grants credit and resets inbound channels as frames arrive.
///
/// Besides not crashing, it checks (a failure traps, which libFuzzer reports as a crash):
/// - a frame that parses encodes back to bytes that parse to the same frame;
/// - the parser consumes nothing when it needs more bytes, and never more than it has;
/// - nothing reaches the application (data, channels, endpoints, members) before the connection is
///   established, and nothing at all after the machine decided to close;
/// - the frame limit rises from the handshake's only once established, as the handler does;
/// - ``ReceiveBuffer`` (the handler's path: reads appended, cut frames stitched, large bodies gathered)
///   gives the same frames as the parser over the same reads, except that a CHUNK cut by a read may come
///   out in pieces, earlier, whose payloads add up to the parser's; it rejects the same input, and
///   reports a truncated frame at the end exactly when bytes are left.
package enum FrameFuzzer {
    /// What one input did.
    package struct Outcome: Equatable, Sendable {
        /// Frames parsed.
        package var frames = 0
        /// Whether the connection reached the connected state.
        package var established = false
        /// Whether the input ended in a parse error.
        package var rejected = false
    }

    /// Runs one input.
    ///
    /// - Parameter input: the fuzzer's bytes.
    /// - Returns: what happened.
    @discardableResult
    package static func run(_ input: UnsafeRawBufferPointer) -> Outcome {
        guard let options = input.first else { return Outcome() }
        let stream = input.dropFirst()
        let local = try! PeerID(id: UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), displayName: "fuzz")
        let invitation = ConnectionStateMachine.Invitation(
            expectedPeer: nil,
            context: ByteBuffer(),
            timeout: .seconds(30)
        )
        let machine = ConnectionStateMachine(
            localPeer: local,
            role: options & 1 == 1 ? .inviter(invitation) : .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3),
            maximumIncomingChannels: 8
        )
        var player = Player(machine: machine, options: options)
        player.play { $0.channelActive() }

        var buffer = ByteBuffer()
        var offset = stream.startIndex
        var sizeSource = stream.startIndex
        while offset < stream.endIndex, !player.stopped {
            let size: Int
            switch (options >> 2) & 3 {
            case 0: size = stream.endIndex - offset
            case 1: size = 1
            case 2: size = 7
            default:
                size = 1 + Int(stream[sizeSource]) * 4
                sizeSource = sizeSource + 1 < stream.endIndex ? sizeSource + 1 : stream.startIndex
            }
            let end = min(stream.endIndex, offset + size)
            let read = ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: stream[offset..<end]))
            buffer.writeImmutableBuffer(read)
            offset = end
            player.feed(&buffer)
            player.feedReader(read)
        }
        player.finishReader(bytesLeft: buffer.readableBytes)
        if options & 0x20 != 0 {
            player.play { $0.deadlinePassed() }
        }
        player.play { $0.channelInactive() }
        return player.outcome
    }

    /// One connection being played: the machine, the decoder's limit, and what has happened so far.
    private struct Player {
        var machine: ConnectionStateMachine
        let options: UInt8
        var limit = FrameLengthLimit.handshake
        var closing = false
        var stopped = false
        var channelsSeen: [UInt32] = []
        var outcome = Outcome()
        /// The frames the parser took in the last ``feed(_:)``, and whether it rejected the input.
        var parsed: [Frame] = []
        /// The handler's path over the same reads, with its own limit (raised with `limit`).
        var reader: ReceiveBuffer
        let readerLimit = FrameLengthLimit(FrameLengthLimit.handshake)
        /// The parser stopped (a rejection, or the machine closed): the reader is compared no further.
        var readerDone = false
        /// The pieces of a CHUNK frame the reader gave before the parser had it whole: its channel and
        /// their payload so far.
        var readerAhead: (channel: UInt32, payload: ByteBuffer)?

        init(machine: ConnectionStateMachine, options: UInt8) {
            self.machine = machine
            self.options = options
            self.reader = ReceiveBuffer(limit: readerLimit)
        }

        /// Appends `read` to the reader and checks it gives the frames the parser just gave, then no more.
        mutating func feedReader(_ read: ByteBuffer) {
            guard !readerDone else { return }
            // Frames only ever rise above the handshake's limit once established, so the limit
            // reached by the end of this read accepts every frame the parser accepted in it.
            readerLimit.value = limit
            reader.append(read)
            for expected in parsed {
                guard case .chunk(let channel, let payload) = expected else {
                    let frame = try? reader.next(allocator: ByteBufferAllocator())
                    precondition(
                        frame == expected,
                        "the reader gave \(String(describing: frame)), the parser \(expected)"
                    )
                    continue
                }
                // Pieces of it may have come out of earlier reads; the rest may come out in pieces now.
                var gathered = ByteBuffer()
                if var ahead = readerAhead.take() {
                    precondition(ahead.channel == channel, "pieces of channel \(ahead.channel), a CHUNK of \(channel)")
                    gathered.writeBuffer(&ahead.payload)
                }
                while gathered.readableBytes < payload.readableBytes {
                    let frame = try? reader.next(allocator: ByteBufferAllocator())
                    guard case .chunk(channel, var piece)? = frame, piece.readableBytes > 0 else {
                        preconditionFailure("the reader gave \(String(describing: frame)), the parser \(expected)")
                    }
                    gathered.writeBuffer(&piece)
                }
                precondition(gathered == payload, "the reader's pieces do not add up to the parser's \(expected)")
            }
            if outcome.rejected {
                readerDone = true
                let rejected: Bool
                do {
                    while try reader.next(allocator: ByteBufferAllocator()) != nil {}
                    rejected = false
                } catch {
                    rejected = true
                }
                precondition(rejected, "the reader accepted what the parser rejected")
            } else if stopped {
                readerDone = true
            } else {
                // Ahead of the parser only by the first pieces of a CHUNK it needs more bytes for.
                while let extra = try? reader.next(allocator: ByteBufferAllocator()) {
                    guard case .chunk(let channel, var piece) = extra, piece.readableBytes > 0,
                        readerAhead == nil || readerAhead?.channel == channel
                    else { preconditionFailure("the reader found a frame the parser did not: \(extra)") }
                    var ahead = readerAhead.take() ?? (channel, ByteBuffer())
                    ahead.payload.writeBuffer(&piece)
                    readerAhead = ahead
                }
            }
        }

        /// At the end of the stream the reader reports a cut frame exactly when the parser left bytes.
        mutating func finishReader(bytesLeft: Int) {
            guard !readerDone else { return }
            let truncated: Bool
            do {
                try reader.finish()
                truncated = false
            } catch {
                precondition(error == .truncatedFrame(bytesLeft: bytesLeft), "finish threw \(error), \(bytesLeft) left")
                truncated = true
            }
            precondition(truncated == (bytesLeft > 0), "finish with \(bytesLeft) bytes left did not say so")
        }

        /// Runs one event on the machine and checks what it answers.
        mutating func play(_ event: (inout ConnectionStateMachine) -> ConnectionStateMachine.Action) {
            let wasEstablished = machine.isEstablished
            let action = event(&machine)
            check(action, wasEstablished: wasEstablished)
        }

        /// Parses every whole frame in `buffer` and plays it, as ``FrameDecoder`` and the handler do.
        mutating func feed(_ buffer: inout ByteBuffer) {
            parsed = []
            while !stopped {
                let before = buffer.readerIndex
                let frame: Frame?
                do {
                    frame = try FrameParser.parse(&buffer, maximumFrameLength: limit)
                } catch {
                    // The handler closes the connection: nothing more is read.
                    outcome.rejected = true
                    play { $0.errorCaught(error) }
                    stopped = true
                    return
                }
                guard let frame else {
                    precondition(buffer.readerIndex == before, "the parser consumed bytes of an incomplete frame")
                    return
                }
                precondition(buffer.readerIndex > before, "the parser returned a frame without consuming bytes")
                roundTrip(frame)
                parsed.append(frame)
                outcome.frames += 1
                play { $0.frameReceived(frame) }
                if options & 0x10 != 0 {
                    play { $0.keepaliveTick() }
                }
            }
        }

        /// Encoding a parsed frame and parsing it again gives the same frame.
        func roundTrip(_ frame: Frame) {
            var encoded = FrameEncoder.buffer(for: frame)
            let length = encoded.readableBytes
            let again = try? FrameParser.parse(&encoded, maximumFrameLength: length)
            precondition(again == frame, "\(frame) did not survive encoding: \(String(describing: again))")
            precondition(encoded.readableBytes == 0, "encoding \(frame.type) left \(encoded.readableBytes) bytes")
        }

        /// Checks an action against what the connection has been through, and carries out what the handler would.
        mutating func check(_ action: ConnectionStateMachine.Action, wasEstablished: Bool) {
            if closing {
                switch action {
                case .none, .reportClosed: break
                default: preconditionFailure("\(action) after the machine decided to close")
                }
            }
            switch action {
            case .none, .send, .peerIdentified, .scheduleDeadline:
                break
            case .startTLS, .decideCertificate, .deliverDatagramKey:
                // The fuzzed machine's preference is none: whatever the peer's HELLO says, it never encrypts.
                preconditionFailure("\(action) on a connection that never encrypts")
            case .deliverResume:
                precondition(!wasEstablished, "a RESUME on an established connection")
            case .establishResumed:
                precondition(machine.isEstablished, "resumed, yet the machine is not established")
                outcome.established = true
                limit = WireProtocol.maximumFrameLength(forMessageLength: WireProtocol.defaultMaximumMessageLength)
            case .deliverResumeSecret, .deliverAck:
                precondition(wasEstablished, "\(action) delivered before the connection was established")
            case .deliverData, .deliverDatagramEndpoint, .deliverMembership, .channel, .resetByPeer:
                precondition(wasEstablished, "\(action) delivered before the connection was established")
                if case .channel(.opened(let open), _) = action {
                    channelsSeen.append(open.channel)
                    if options & 0x40 != 0 {
                        play { $0.grantCredit(1 << 16, on: open.channel) }
                        if channelsSeen.count % 2 == 0 {
                            play { $0.resetIncomingChannel(open.channel, .cancelled) }
                        }
                    }
                }
            case .deliverInvitation:
                precondition(!wasEstablished, "an invitation on an established connection")
                if options & 2 != 0 {
                    play { machine in
                        let accepted = machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3))
                        precondition(accepted != nil, "an invitation just delivered could not be accepted")
                        return accepted!
                    }
                }
            case .establish:
                precondition(machine.isEstablished, "establish, yet the machine is not established")
                outcome.established = true
                limit = WireProtocol.maximumFrameLength(forMessageLength: WireProtocol.defaultMaximumMessageLength)
            case .close:
                closing = true
            case .reportClosed:
                stopped = true
            }
        }
    }
}
