import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

private let invitationContext = ByteBuffer(string: "join me")
private let keepaliveInterval = TimeAmount.seconds(1)
private let livenessTimeout = TimeAmount.seconds(3)

/// A machine for alice inviting `expectedPeer` (bob by default).
private func makeInviter(
    expecting expectedPeer: PeerID? = F.bob,
    timeout: TimeAmount = .seconds(30),
    interval: TimeAmount = keepaliveInterval,
    liveness: TimeAmount = livenessTimeout
) -> Machine {
    let invitation = Machine.Invitation(expectedPeer: expectedPeer, context: invitationContext, timeout: timeout)
    return Machine(
        localPeer: F.alice,
        role: .inviter(invitation),
        keepaliveInterval: interval,
        livenessTimeout: liveness
    )
}

/// A machine for alice waiting to be invited.
private func makeInvitee(interval: TimeAmount = keepaliveInterval, liveness: TimeAmount = livenessTimeout) -> Machine {
    Machine(localPeer: F.alice, role: .invitee, keepaliveInterval: interval, livenessTimeout: liveness)
}

private let helloFromBob = Frame.hello(Frame.Hello(peer: F.bob))
private let inviteFromBob = Frame.invite(Frame.Invite(timeoutMilliseconds: 5_000, context: invitationContext))

/// Where a connection can be, reached by driving a fresh machine with valid events.
enum Stage: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inviterIdle
    case inviteeIdle
    case inviterAwaitingHello
    case inviterAwaitingAnswer
    case inviteeAwaitingHello
    case inviteeAwaitingInvite
    case inviteeAwaitingDecision
    case inviterEstablished
    case inviteeEstablished

    var testDescription: String { rawValue }

    static let handshake: [Stage] = [
        .inviterAwaitingHello, .inviterAwaitingAnswer, .inviteeAwaitingHello, .inviteeAwaitingInvite,
        .inviteeAwaitingDecision,
    ]

    /// A machine in this stage; the peer on the other side is bob.
    func machine() -> ConnectionStateMachine {
        switch self {
        case .inviterIdle:
            return makeInviter()
        case .inviteeIdle:
            return makeInvitee()
        case .inviterAwaitingHello:
            var machine = Stage.inviterIdle.machine()
            _ = machine.channelActive()
            return machine
        case .inviterAwaitingAnswer:
            var machine = Stage.inviterAwaitingHello.machine()
            _ = machine.frameReceived(helloFromBob)
            return machine
        case .inviterEstablished:
            var machine = Stage.inviterAwaitingAnswer.machine()
            _ = machine.frameReceived(.accept)
            return machine
        case .inviteeAwaitingHello:
            var machine = Stage.inviteeIdle.machine()
            _ = machine.channelActive()
            return machine
        case .inviteeAwaitingInvite:
            var machine = Stage.inviteeAwaitingHello.machine()
            _ = machine.frameReceived(helloFromBob)
            return machine
        case .inviteeAwaitingDecision:
            var machine = Stage.inviteeAwaitingInvite.machine()
            _ = machine.frameReceived(inviteFromBob)
            return machine
        case .inviteeEstablished:
            var machine = Stage.inviteeAwaitingDecision.machine()
            _ = machine.accept(keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
            return machine
        }
    }

    /// The frame types this stage takes without a protocol violation.
    var allowed: Set<FrameType> {
        switch self {
        case .inviterIdle, .inviteeIdle: return []
        case .inviterAwaitingHello, .inviteeAwaitingHello: return [.hello, .goodbye]
        case .inviterAwaitingAnswer: return [.accept, .decline, .goodbye]
        case .inviteeAwaitingInvite: return [.invite, .resume, .goodbye]
        case .inviteeAwaitingDecision: return [.goodbye]
        case .inviterEstablished, .inviteeEstablished:
            // Channel frames are allowed too; ChannelTable judges them (see ChannelTableTests).
            return [
                .data, .keepalive, .goodbye, .datagramEndpoint, .sessionListener, .members, .open, .chunk, .end, .reset,
                .credit, .done, .resumeSecret, .ack,
            ]
        }
    }

    /// How the machine names this stage in an unexpected-frame error.
    var stateWords: String {
        switch self {
        case .inviterIdle, .inviteeIdle: return "not yet connected"
        case .inviterAwaitingHello, .inviteeAwaitingHello: return "waiting for HELLO"
        case .inviterAwaitingAnswer: return "waiting for the answer to the invitation"
        case .inviteeAwaitingInvite: return "waiting for INVITE"
        case .inviteeAwaitingDecision: return "the invitation is not accepted yet"
        case .inviterEstablished, .inviteeEstablished: return "connected"
        }
    }

    /// The peer known in this stage.
    var peer: PeerID? {
        switch self {
        case .inviterIdle, .inviteeIdle, .inviterAwaitingHello, .inviteeAwaitingHello: return nil
        default: return F.bob
        }
    }

    var isEstablished: Bool { self == .inviterEstablished || self == .inviteeEstablished }

    /// Every (stage, frame type) pair that must be a protocol violation.
    static let forbiddenPairs: [(Stage, FrameType)] = allCases.flatMap { stage in
        FrameType.allCases.filter { !stage.allowed.contains($0) }.map { (stage, $0) }
    }
}

/// A failure that is not a ``ProtocolError``, as the socket reports.
private struct SocketFailure: Error, CustomStringConvertible {
    var description: String { "connection reset by peer" }
}

/// The reason of a `.close` action, or nil.
private func closeReason(_ action: Machine.Action?) -> DisconnectReason? {
    guard case .close(let reason, _) = action else { return nil }
    return reason
}

@Suite("ConnectionStateMachine")
struct ConnectionStateMachineTests {
    // MARK: - Happy paths

    @Test("inviter: HELLO and INVITE, the invitee's HELLO, ACCEPT, then data")
    func inviterHappyPath() {
        var machine = makeInviter(timeout: .seconds(30))
        #expect(machine.peer == nil)
        let invite = Frame.invite(Frame.Invite(timeoutMilliseconds: 30_000, context: invitationContext))
        #expect(
            machine.channelActive()
                == .scheduleDeadline(.seconds(30), sending: [.hello(Frame.Hello(peer: F.alice)), invite])
        )
        #expect(machine.frameReceived(helloFromBob) == .peerIdentified(F.bob))
        #expect(machine.peer == F.bob)
        #expect(!machine.isEstablished)
        #expect(machine.frameReceived(.accept) == .establish(F.bob, sending: nil, finishingHandshake: true))
        #expect(machine.isEstablished)
        #expect(machine.frameReceived(.data(F.buffer("hi"))) == .deliverData(F.buffer("hi"), from: F.bob))
        #expect(machine.frameReceived(.data(ByteBuffer())) == .deliverData(ByteBuffer(), from: F.bob))
        #expect(machine.frameReceived(.keepalive) == .none)
    }

    @Test("the HELLO sent carries this side's identity and protocol version")
    func helloContents() {
        var machine = makeInvitee()
        guard case .scheduleDeadline(_, let frames) = machine.channelActive(), case .hello(let hello) = frames.first
        else {
            Issue.record("expected a HELLO")
            return
        }
        #expect(frames.count == 1)
        #expect(hello.peer == F.alice)
        #expect(hello.peer.displayName == "alice")
        #expect(hello.version == WireProtocol.version)
    }

    @Test(
        "the INVITE carries the invitation timeout in milliseconds, clamped to UInt32",
        arguments: [
            (TimeAmount.seconds(30), UInt32(30_000)),
            (.milliseconds(1_500), 1_500),
            (.nanoseconds(999_999), 0),
            (.hours(2_000), .max),
            (.seconds(-5), 0),
        ]
    )
    func inviteTimeout(timeout: TimeAmount, milliseconds: UInt32) {
        var machine = makeInviter(timeout: timeout)
        guard case .scheduleDeadline(_, let frames) = machine.channelActive(), frames.count == 2,
            case .invite(let invite) = frames[1]
        else {
            Issue.record("expected HELLO and INVITE")
            return
        }
        #expect(invite.timeoutMilliseconds == milliseconds)
        #expect(invite.context == invitationContext)
    }

    @Test("invitee: HELLO, the inviter's HELLO, INVITE, accept, then data")
    func inviteeHappyPath() {
        var machine = makeInvitee()
        #expect(
            machine.channelActive() == .scheduleDeadline(.seconds(10), sending: [.hello(Frame.Hello(peer: F.alice))])
        )
        #expect(machine.frameReceived(helloFromBob) == .none)
        #expect(machine.peer == F.bob)
        #expect(
            machine.frameReceived(inviteFromBob)
                == .deliverInvitation(from: F.bob, context: invitationContext, timeout: .milliseconds(5_000))
        )
        #expect(!machine.isEstablished)
        let accepted = machine.accept(keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
        #expect(accepted == .establish(F.bob, sending: .accept, finishingHandshake: false))
        #expect(machine.isEstablished)
        #expect(machine.frameReceived(.data(F.buffer("hi"))) == .deliverData(F.buffer("hi"), from: F.bob))
    }

    @Test("invitee: an INVITE asking for 49 days is held at most the maximum invitation timeout")
    func invitationTimeoutCapped() {
        var machine = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            maximumInvitationTimeout: .seconds(120)
        )
        _ = machine.channelActive()
        _ = machine.frameReceived(helloFromBob)
        let greedy = Frame.invite(Frame.Invite(timeoutMilliseconds: .max, context: invitationContext))
        #expect(
            machine.frameReceived(greedy)
                == .deliverInvitation(from: F.bob, context: invitationContext, timeout: .seconds(120))
        )
        #expect(machine.deadlinePassed() == .close(.timedOut, sending: .decline(.timedOut)))
    }

    @Test("channelActive a second time does nothing")
    func channelActiveTwice() {
        for stage in [Stage.inviterAwaitingHello, .inviteeAwaitingHello, .inviterEstablished] {
            var machine = stage.machine()
            #expect(machine.channelActive() == .none, "\(stage)")
        }
    }

    @Test("an inviter with no expected peer takes whoever answers")
    func noExpectedPeer() {
        var machine = makeInviter(expecting: nil)
        _ = machine.channelActive()
        #expect(machine.frameReceived(.hello(Frame.Hello(peer: F.eve))) == .peerIdentified(F.eve))
        #expect(machine.frameReceived(.accept) == .establish(F.eve, sending: nil, finishingHandshake: true))
    }

    @Test("two machines complete the handshake over encoded bytes and say goodbye")
    func twoMachinesOverTheWire() throws {
        var inviter = makeInviter()  // alice, expecting bob
        var invitee = Machine(
            localPeer: F.bob,
            role: .invitee,
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout
        )

        /// Encodes the frames an action sends and parses them back, as the far side reads them.
        func wire(_ action: Machine.Action) throws -> [Frame] {
            let frames: [Frame]
            switch action {
            case .send(let sent), .scheduleDeadline(_, let sent): frames = sent
            case .establish(_, let frame?, _), .close(_, let frame?): frames = [frame]
            default: frames = []
            }
            var buffer = ByteBuffer()
            for frame in frames { FrameEncoder.encode(frame, into: &buffer) }
            var parsed: [Frame] = []
            while let frame = try FrameParser.parse(&buffer, maximumFrameLength: FrameLengthLimit.handshake) {
                parsed.append(frame)
            }
            #expect(buffer.readableBytes == 0)
            return parsed
        }

        let toInvitee = try wire(inviter.channelActive())
        let toInviter = try wire(invitee.channelActive())
        #expect(toInvitee.count == 2 && toInviter.count == 1)
        #expect(invitee.frameReceived(toInvitee[0]) == .none)
        #expect(
            invitee.frameReceived(toInvitee[1])
                == .deliverInvitation(from: F.alice, context: invitationContext, timeout: .seconds(30))
        )
        #expect(inviter.frameReceived(toInviter[0]) == .peerIdentified(F.bob))
        let accepted = invitee.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3))
        let accept = try #require(accepted)
        #expect(accept == .establish(F.alice, sending: .accept, finishingHandshake: false))
        let answer = try wire(accept)
        #expect(
            inviter.frameReceived(try #require(answer.first))
                == .establish(F.bob, sending: nil, finishingHandshake: true)
        )

        #expect(inviter.isEstablished && invitee.isEstablished)
        let data = try wire(.send([.data(F.buffer("ping"))]))
        #expect(invitee.frameReceived(data[0]) == .deliverData(F.buffer("ping"), from: F.alice))

        let close = inviter.close(.localDisconnect)
        #expect(close == .close(.localDisconnect, sending: .goodbye(.localDisconnect)))
        let goodbye = try wire(close)
        #expect(invitee.frameReceived(goodbye[0]) == .close(.peerDisconnected, sending: nil))
        #expect(inviter.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .localDisconnect))
        #expect(invitee.channelInactive().reportedClose == ReportedClose(peer: F.alice, reason: .peerDisconnected))
    }

    // MARK: - Declining

    @Test(
        "invitee declines: DECLINE with the reason, reported when closed",
        arguments: [
            DisconnectReason.declined, .busy, .sessionFull,
        ]
    )
    func inviteeDeclines(reason: DisconnectReason) {
        var machine = Stage.inviteeAwaitingDecision.machine()
        #expect(machine.decline(reason) == .close(reason, sending: .decline(reason)))
        #expect(!machine.isEstablished)
        #expect(machine.decline(reason) == nil)
        #expect(machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: reason))
    }

    @Test(
        "inviter receives DECLINE: closes without a frame, reports the reason",
        arguments: [
            (DisconnectReason.declined, DisconnectReason.declined),
            (.localDisconnect, .declined),
            (.busy, .busy),
            (.sessionFull, .sessionFull),
            (.timedOut, .timedOut),
        ]
    )
    func inviterDeclined(sent: DisconnectReason, reported: DisconnectReason) {
        var machine = Stage.inviterAwaitingAnswer.machine()
        #expect(machine.frameReceived(.decline(sent)) == .close(reported, sending: nil))
        #expect(machine.frameReceived(.accept) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: reported))
        #expect(machine.channelInactive() == .none)
    }

    @Test("accept() and decline() with no invitation pending return nil", arguments: Stage.allCases)
    func nothingPending(stage: Stage) {
        guard stage != .inviteeAwaitingDecision else { return }
        var machine = stage.machine()
        #expect(machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil)
        #expect(machine.decline(.declined) == nil)
        #expect(machine.isEstablished == stage.isEstablished)
    }

    @Test("an invitation withdrawn by GOODBYE can no longer be accepted")
    func withdrawnInvitation() {
        var machine = Stage.inviteeAwaitingDecision.machine()
        #expect(machine.frameReceived(.goodbye(.localDisconnect)) == .close(.peerDisconnected, sending: nil))
        #expect(machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil)
        #expect(machine.decline(.declined) == nil)
    }

    // MARK: - Unexpected peers

    @Test("inviter: a HELLO from another peer than expected closes with unexpectedPeer")
    func unexpectedPeer() {
        var machine = Stage.inviterAwaitingHello.machine()
        let action = machine.frameReceived(.hello(Frame.Hello(peer: F.eve)))
        #expect(action == .close(.unexpectedPeer, sending: .goodbye(.unexpectedPeer)))
        #expect(closeReason(action)?.detail == "expected \(F.bob), \(F.eve) answered")
        #expect(machine.frameReceived(.accept) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.eve, reason: .unexpectedPeer))
    }

    @Test("inviter: a peer with the expected name but another id is unexpected")
    func sameNameOtherID() throws {
        var machine = Stage.inviterAwaitingHello.machine()
        let impostor = try PeerID(displayName: F.bob.displayName)
        #expect(
            machine.frameReceived(.hello(Frame.Hello(peer: impostor)))
                == .close(.unexpectedPeer, sending: .goodbye(.unexpectedPeer))
        )
    }

    @Test("inviter: a HELLO carrying the local peer itself closes with unexpectedPeer", arguments: [F.bob, nil])
    func connectedToItself(expected: PeerID?) {
        var machine = makeInviter(expecting: expected)
        _ = machine.channelActive()
        let action = machine.frameReceived(.hello(Frame.Hello(peer: F.alice)))
        #expect(action == .close(.unexpectedPeer, sending: .goodbye(.unexpectedPeer)))
        #expect(closeReason(action)?.detail == "connected to itself")
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.alice, reason: .unexpectedPeer))
    }

    @Test(
        "invitee: a HELLO carrying the local peer itself closes with unexpectedPeer"
    )
    func inviteeConnectedToItself() {
        var machine = Stage.inviteeAwaitingHello.machine()
        let action = machine.frameReceived(.hello(Frame.Hello(peer: F.alice)))
        #expect(action == .close(.unexpectedPeer, sending: .goodbye(.unexpectedPeer)))
    }

    // MARK: - Out-of-order frames

    @Test("every frame out of order closes with protocolViolation and a GOODBYE", arguments: Stage.forbiddenPairs)
    func outOfOrder(stage: Stage, type: FrameType) {
        var machine = stage.machine()
        let action = machine.frameReceived(F.sample(type))
        #expect(action == .close(.protocolViolation, sending: .goodbye(.protocolViolation)))
        let expectedDetail = ProtocolError.unexpectedFrame(type, state: stage.stateWords).description
        #expect(closeReason(action)?.detail == expectedDetail)
        #expect(!machine.isEstablished)
        #expect(machine.frameReceived(F.sample(type)) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .protocolViolation))
    }

    @Test("the out-of-order cases named in the protocol")
    func namedOutOfOrderCases() {
        let violation = Machine.Action.close(.protocolViolation, sending: .goodbye(.protocolViolation))
        // DATA before ACCEPT, on both sides.
        var inviter = Stage.inviterAwaitingAnswer.machine()
        #expect(inviter.frameReceived(.data(F.buffer("early"))) == violation)
        var invitee = Stage.inviteeAwaitingDecision.machine()
        #expect(invitee.frameReceived(.data(F.buffer("early"))) == violation)
        // INVITE sent to an inviter; ACCEPT sent to an invitee.
        inviter = Stage.inviterAwaitingAnswer.machine()
        #expect(inviter.frameReceived(inviteFromBob) == violation)
        invitee = Stage.inviteeAwaitingInvite.machine()
        #expect(invitee.frameReceived(.accept) == violation)
        // A second HELLO.
        invitee = Stage.inviteeAwaitingInvite.machine()
        #expect(invitee.frameReceived(helloFromBob) == violation)
        // KEEPALIVE before established.
        invitee = Stage.inviteeAwaitingDecision.machine()
        #expect(invitee.frameReceived(.keepalive) == violation)
        // HELLO after established.
        inviter = Stage.inviterEstablished.machine()
        #expect(inviter.frameReceived(helloFromBob) == violation)
    }

    @Test("the allowed frames of each stage are not violations", arguments: Stage.allCases)
    func allowedFrames(stage: Stage) {
        // Whether a channel frame is allowed depends on the channels open: see ChannelTableTests.
        let channelFrames: Set<FrameType> = [.open, .chunk, .end, .reset, .credit, .done]
        for type in stage.allowed where !channelFrames.contains(type) {
            var machine = stage.machine()
            #expect(closeReason(machine.frameReceived(F.sample(type))) != .protocolViolation, "\(type)")
        }
    }

    @Test("once established, channel frames go through the channel table; its violations close the connection")
    func channelFramesWhenEstablished() {
        // The invitee: the peer (inviter) numbers its channels odd.
        var machine = Stage.inviteeEstablished.machine()
        #expect(machine.firstLocalChannel == 2)
        let open = Frame.Open(channel: 1, kind: .stream, size: 0, name: Array("log".utf8))
        #expect(machine.frameReceived(.open(open)) == .channel(.opened(open), from: F.bob))
        #expect(
            machine.frameReceived(.chunk(channel: 1, F.buffer("abc")))
                == .channel(.received(channel: 1, F.buffer("abc")), from: F.bob)
        )
        #expect(machine.grantCredit(3, on: 1) == .send([.credit(channel: 1, increment: 3)]))
        #expect(
            machine.frameReceived(.credit(channel: 2, increment: 10))
                == .channel(.credited(channel: 2, increment: 10), from: F.bob)
        )
        #expect(
            machine.frameReceived(.end(channel: 1, digest: nil))
                == .channel(.ended(channel: 1, digest: nil), from: F.bob)
        )
        #expect(machine.grantCredit(3, on: 1) == .none, "no credit for an ended channel")
        let action = machine.frameReceived(.chunk(channel: 3, F.buffer("never opened")))
        #expect(action == .close(.protocolViolation, sending: .goodbye(.protocolViolation)))
        #expect(closeReason(action)?.detail == "malformed CHUNK frame: channel 3 was never opened")
        #expect(machine.grantCredit(3, on: 1) == .none)
    }

    @Test("an OPEN beyond the limit is answered with RESET refused, and the connection stays up")
    func channelLimit() {
        var machine = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(5),
            maximumInboundChannels: 1
        )
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        _ = machine.frameReceived(.invite(Frame.Invite(timeoutMilliseconds: 1000, context: F.buffer(""))))
        _ = machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(5))
        let first = Frame.Open(channel: 1, kind: .stream, size: 0, name: [0x61])
        let second = Frame.Open(channel: 3, kind: .stream, size: 0, name: [0x62])
        #expect(machine.frameReceived(.open(first)) == .channel(.opened(first), from: F.bob))
        #expect(machine.frameReceived(.open(second)) == .send([.reset(channel: 3, .refused)]))
        #expect(machine.isEstablished)
        #expect(machine.resetInboundChannel(1, .cancelled) == .send([.reset(channel: 1, .cancelled)]))
        let third = Frame.Open(channel: 5, kind: .stream, size: 0, name: [0x63])
        #expect(machine.frameReceived(.open(third)) == .channel(.opened(third), from: F.bob))
    }

    // MARK: - GOODBYE

    @Test("GOODBYE during the handshake closes quietly with the peer's reason", arguments: Stage.handshake)
    func goodbyeDuringHandshake(stage: Stage) {
        var machine = stage.machine()
        #expect(machine.frameReceived(.goodbye(.sessionFull)) == .close(.sessionFull, sending: nil))
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .sessionFull))
        // The peer's localDisconnect is our peerDisconnected.
        machine = stage.machine()
        #expect(machine.frameReceived(.goodbye(.localDisconnect)) == .close(.peerDisconnected, sending: nil))
    }

    @Test(
        "GOODBYE while established closes with peerDisconnected, reported once closed",
        arguments: [
            Stage.inviterEstablished, .inviteeEstablished,
        ]
    )
    func goodbyeWhileEstablished(stage: Stage) {
        var machine = stage.machine()
        // (GOODBYE 6, the peer's liveness timeout, reads as a liveness timeout: see ReconnectionCoreTests.)
        let action = machine.frameReceived(.goodbye(.localDisconnect))
        #expect(action == .close(.peerDisconnected, sending: nil))
        #expect(closeReason(action)?.detail?.hasPrefix("peer said: ") == true)
        #expect(!machine.isEstablished)
        #expect(machine.peer == F.bob)
        #expect(machine.frameReceived(.data(F.buffer("late"))) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .peerDisconnected))
        #expect(machine.channelInactive() == .none)
        #expect(machine.peer == nil)
    }

    // MARK: - Deadlines

    @Test("the handshake deadline, in every stage", arguments: Stage.allCases)
    func deadline(stage: Stage) {
        var machine = stage.machine()
        let expected: Machine.Action
        switch stage {
        case .inviterAwaitingHello, .inviterAwaitingAnswer:
            expected = .close(.timedOut, sending: .goodbye(.timedOut))
        case .inviteeAwaitingHello, .inviteeAwaitingInvite:
            expected = .close(.handshakeTimeout, sending: .goodbye(.handshakeTimeout))
        case .inviteeAwaitingDecision:
            expected = .close(.timedOut, sending: .decline(.timedOut))
        case .inviterIdle, .inviteeIdle, .inviterEstablished, .inviteeEstablished:
            expected = .none
        }
        #expect(machine.deadlinePassed() == expected)
        #expect(machine.isEstablished == stage.isEstablished)
        guard let reason = closeReason(expected) else { return }
        #expect(machine.deadlinePassed() == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: reason))
    }

    @Test("after the decision deadline the application's answer is too late")
    func answerAfterDeadline() {
        var machine = Stage.inviteeAwaitingDecision.machine()
        _ = machine.deadlinePassed()
        #expect(machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil)
        #expect(machine.decline(.declined) == nil)
        #expect(!machine.isEstablished)
    }

    // MARK: - Keepalive and liveness

    @Test(
        "keepalive ticks send KEEPALIVE; three silent ticks of 1 s reach a 3 s liveness timeout",
        arguments: [
            Stage.inviterEstablished, .inviteeEstablished,
        ]
    )
    func livenessTimeoutReached(stage: Stage) {
        var machine = stage.machine()
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        let action = machine.keepaliveTick()
        #expect(action == .close(.livenessTimeout, sending: .goodbye(.livenessTimeout)))
        #expect(closeReason(action)?.detail == "nothing received for 3.0 s")
        #expect(machine.keepaliveTick() == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .livenessTimeout))
    }

    @Test("any inbound frame resets the silence count", arguments: [Frame.keepalive, .data(ByteBuffer())])
    func inboundResets(frame: Frame) {
        var machine = Stage.inviterEstablished.machine()
        for _ in 0..<5 {
            #expect(machine.keepaliveTick() == .send([.keepalive]))
            #expect(machine.keepaliveTick() == .send([.keepalive]))
            _ = machine.frameReceived(frame)
        }
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(closeReason(machine.keepaliveTick()) == .livenessTimeout)
    }

    @Test("ticks while reading is paused do not count toward the liveness timeout")
    func pausedReading() {
        var machine = Stage.inviterEstablished.machine()
        #expect(machine.keepaliveTick() == .send([.keepalive]))  // 1 s of silence
        machine.readingPaused(true)
        for _ in 0..<10 {
            #expect(machine.keepaliveTick() == .send([.keepalive]))
        }
        machine.readingPaused(false)
        #expect(machine.keepaliveTick() == .send([.keepalive]))  // 2 s
        #expect(closeReason(machine.keepaliveTick()) == .livenessTimeout)  // 3 s
    }

    @Test("a liveness timeout that is not a multiple of the interval closes on the first tick past it")
    func livenessRoundsUp() {
        var machine = makeInviter(interval: .seconds(1), liveness: .milliseconds(2_500))
        _ = machine.channelActive()
        _ = machine.frameReceived(helloFromBob)
        _ = machine.frameReceived(.accept)
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(closeReason(machine.keepaliveTick()) == .livenessTimeout)
    }

    @Test("accept() applies the session's keepalive interval and liveness timeout")
    func acceptAppliesTimers() {
        var machine = makeInvitee(interval: .seconds(10), liveness: .seconds(60))
        _ = machine.channelActive()
        _ = machine.frameReceived(helloFromBob)
        _ = machine.frameReceived(inviteFromBob)
        _ = machine.accept(keepaliveInterval: .milliseconds(500), livenessTimeout: .seconds(1))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        let action = machine.keepaliveTick()
        #expect(closeReason(action) == .livenessTimeout)
        #expect(closeReason(action)?.detail == "nothing received for 1.0 s")
    }

    @Test("keepalive ticks before the connection is established do nothing", arguments: Stage.allCases)
    func tickBeforeEstablished(stage: Stage) {
        guard !stage.isEstablished else { return }
        var machine = stage.machine()
        for _ in 0..<5 {
            #expect(machine.keepaliveTick() == .none)
        }
        #expect(machine.peer == stage.peer)
    }

    // MARK: - Closing

    @Test(
        "close() sends GOODBYE once; the reason is reported once the channel is inactive",
        arguments: [
            Stage.inviterAwaitingHello, .inviterAwaitingAnswer, .inviteeAwaitingHello, .inviteeAwaitingInvite,
            .inviteeAwaitingDecision, .inviterEstablished, .inviteeEstablished,
        ]
    )
    func closeLocally(stage: Stage) {
        var machine = stage.machine()
        #expect(machine.close(.localDisconnect) == .close(.localDisconnect, sending: .goodbye(.localDisconnect)))
        #expect(machine.close(.localDisconnect) == .none)
        #expect(machine.close(.sessionFull) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .localDisconnect))
        #expect(machine.channelInactive() == .none)
        #expect(machine.close(.localDisconnect) == .none)
    }

    @Test("close() before the channel is active closes without a frame")
    func closeWhenIdle() {
        var machine = makeInviter()
        #expect(machine.close(.localDisconnect) == .close(.localDisconnect, sending: nil))
        #expect(machine.channelActive() == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: nil, reason: .localDisconnect))
    }

    @Test("once closing, every event but channelInactive does nothing")
    func eventsWhileClosing() {
        var machine = Stage.inviterEstablished.machine()
        _ = machine.close(.localDisconnect)
        for frame in F.oneOfEachType {
            #expect(machine.frameReceived(frame) == .none, "\(frame.type)")
        }
        #expect(machine.deadlinePassed() == .none)
        #expect(machine.keepaliveTick() == .none)
        #expect(machine.errorCaught(ProtocolError.badMagic) == .none)
        #expect(machine.errorCaught(SocketFailure()) == .none)
        #expect(machine.channelActive() == .none)
        #expect(machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil)
        #expect(machine.peer == F.bob)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .localDisconnect))
    }

    @Test("once closed, every event does nothing")
    func eventsWhenClosed() {
        var machine = Stage.inviteeEstablished.machine()
        _ = machine.channelInactive()
        for frame in F.oneOfEachType {
            #expect(machine.frameReceived(frame) == .none, "\(frame.type)")
        }
        #expect(machine.deadlinePassed() == .none)
        #expect(machine.keepaliveTick() == .none)
        #expect(machine.errorCaught(SocketFailure()) == .none)
        #expect(machine.errorCaught(ProtocolError.emptyFrame) == .none)
        #expect(machine.close(.localDisconnect) == .none)
        #expect(machine.channelInactive() == .none)
        #expect(machine.peer == nil)
    }

    @Test("channelInactive without GOODBYE reports connectionLost", arguments: Stage.allCases)
    func connectionLost(stage: Stage) {
        var machine = stage.machine()
        let action = machine.channelInactive()
        switch stage {
        case .inviterIdle, .inviteeIdle:
            #expect(action.reportedClose == ReportedClose(peer: nil, reason: .connectionFailed))
        default:
            #expect(action.reportedClose == ReportedClose(peer: stage.peer, reason: .connectionLost))
            guard case .reportClosed(_, let reason, _, _) = action else { return }
            #expect(reason.detail == "closed without GOODBYE")
        }
        #expect(machine.channelInactive() == .none)
    }

    // MARK: - Errors

    @Test("a ProtocolError closes with a GOODBYE carrying its reason", arguments: Stage.allCases)
    func protocolErrorCaught(stage: Stage) {
        var machine = stage.machine()
        let action = machine.errorCaught(ProtocolError.badMagic)
        #expect(action == .close(.protocolViolation, sending: .goodbye(.protocolViolation)))
        #expect(closeReason(action)?.detail == ProtocolError.badMagic.description)
        #expect(machine.errorCaught(ProtocolError.badMagic) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .protocolViolation))
    }

    @Test("an incompatible version closes with incompatibleVersion")
    func incompatibleVersionCaught() {
        var machine = Stage.inviterAwaitingHello.machine()
        let action = machine.errorCaught(ProtocolError.incompatibleVersion(2))
        #expect(action == .close(.incompatibleVersion, sending: .goodbye(.incompatibleVersion)))
    }

    @Test("any other error closes without a frame, as a lost connection", arguments: Stage.allCases)
    func otherErrorCaught(stage: Stage) {
        var machine = stage.machine()
        let action = machine.errorCaught(SocketFailure())
        #expect(action == .close(.connectionLost, sending: nil))
        #expect(closeReason(action)?.detail == "connection reset by peer")
        #expect(machine.errorCaught(SocketFailure()) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .connectionLost))
    }

    // MARK: - Reasons

    @Test("DisconnectReason equality ignores the detail; the description includes it")
    func reasonEquality() {
        let detailed = DisconnectReason.protocolViolation.with(detail: "bad frame")
        #expect(detailed == .protocolViolation)
        #expect(detailed.hashValue == DisconnectReason.protocolViolation.hashValue)
        #expect(detailed != .peerDisconnected)
        #expect(detailed.detail == "bad frame")
        #expect(detailed.description == "protocol violation: bad frame")
        #expect(DisconnectReason.protocolViolation.description == "protocol violation")
        #expect(Machine.Action.close(detailed, sending: nil) == .close(.protocolViolation, sending: nil))
    }

    @Test("every reason survives its wire byte")
    func reasonWireValues() {
        let all: [DisconnectReason] = [
            .localDisconnect, .peerDisconnected, .declined, .timedOut, .connectionLost, .livenessTimeout,
            .protocolViolation, .incompatibleVersion, .sessionFull, .unexpectedPeer, .connectionFailed,
            .handshakeTimeout, .busy, .duplicate,
        ]
        #expect(Set(all.map(\.wireValue)).count == all.count)
        for reason in all {
            #expect(DisconnectReason(wireValue: reason.wireValue) == reason)
            #expect(DisconnectReason(wireValue: reason.wireValue).detail == nil)
        }
        #expect(DisconnectReason(wireValue: 0) == .peerDisconnected)
        #expect(DisconnectReason(wireValue: 200) == .peerDisconnected)
    }
}
