import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

/// The handshake state (`HandshakeState`): HELLOs, INVITE and its answer, and the deadlines, in memory.
@Suite("Connection machine: handshake")
struct HandshakeStateTests {
    // MARK: - Happy paths

    @Test("inviter: HELLO and INVITE, the invitee's HELLO, ACCEPT, then data")
    func inviterHappyPath() {
        var machine = makeInviter(timeout: .seconds(30))
        #expect(machine.peer == nil)
        let invite = Frame.invite(
            Frame.Invite(timeoutMilliseconds: 30_000, fields: .defaultLimits, context: invitationContext)
        )
        #expect(
            machine.channelActive()
                == .scheduleDeadline(.seconds(30), sending: [.hello(Frame.Hello(peer: F.alice)), invite])
        )
        #expect(machine.frameReceived(helloFromBob) == .peerIdentified(F.bob))
        #expect(machine.peer == F.bob)
        #expect(!machine.isEstablished)
        #expect(
            machine.frameReceived(.accept(.defaultLimits)) == .establish(F.bob, sending: nil, finishingHandshake: true)
        )
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
        #expect(accepted == .establish(F.bob, sending: .accept(.defaultLimits), finishingHandshake: false))
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
        let greedy = Frame.invite(
            Frame.Invite(timeoutMilliseconds: .max, fields: .defaultLimits, context: invitationContext)
        )
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
        #expect(
            machine.frameReceived(.accept(.defaultLimits)) == .establish(F.eve, sending: nil, finishingHandshake: true)
        )
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
        #expect(accept == .establish(F.alice, sending: .accept(.defaultLimits), finishingHandshake: false))
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
        #expect(machine.frameReceived(.accept(.defaultLimits)) == .none)
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
        #expect(closedWith(action)?.detail == "expected \(F.bob), \(F.eve) answered")
        #expect(machine.frameReceived(.accept(.defaultLimits)) == .none)
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
        #expect(closedWith(action)?.detail == "connected to itself")
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
        guard let reason = closedWith(expected) else { return }
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

    // MARK: - Decisions the handler carries out

    @Test("each role starts the deadline it waits under when the channel becomes active")
    func deadlineOfEachRole() {
        var inviter = makeInviter(timeout: .seconds(12))
        guard case .scheduleDeadline(let inviterDeadline, _) = inviter.channelActive() else {
            Issue.record("the inviter started no deadline")
            return
        }
        #expect(inviterDeadline == .seconds(12))
        var invitee = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            handshakeTimeout: .seconds(4)
        )
        #expect(
            invitee.channelActive() == .scheduleDeadline(.seconds(4), sending: [.hello(Frame.Hello(peer: F.alice))])
        )
        let resumption = Machine.Resumption(expectedPeer: F.bob, secret: [7, 7], nextExpected: 0, timeout: .seconds(9))
        var resumer = Machine(
            localPeer: F.alice,
            role: .resumer(resumption),
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            handshakeTimeout: .seconds(4)
        )
        guard case .scheduleDeadline(let resumerDeadline, _) = resumer.channelActive() else {
            Issue.record("the resumer started no deadline")
            return
        }
        #expect(resumerDeadline == .seconds(9))
    }

    @Test("a RESUME waits for the session's answer under the handshake timeout")
    func resumeDeadline() {
        var invitee = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            handshakeTimeout: .seconds(4)
        )
        _ = invitee.channelActive()
        _ = invitee.frameReceived(helloFromBob)
        let resume = Frame.resume(Frame.Resume(peer: F.bob.id, secret: [1, 2, 3], nextExpected: 2))
        #expect(
            invitee.frameReceived(resume)
                == .deliverResume(from: F.bob, secret: [1, 2, 3], peerExpects: 2, deadline: .seconds(4))
        )
    }

    @Test("those waiting for the handshake are told once: by the invitation, the establishment or the close")
    func handshakeFinishedOnce() {
        // The inviter: the establishment tells them; the close after it does not again.
        var inviter = Stage.inviterAwaitingAnswer.machine()
        #expect(
            inviter.frameReceived(.accept(.defaultLimits)) == .establish(F.bob, sending: nil, finishingHandshake: true)
        )
        _ = inviter.close(.localDisconnect)
        #expect(
            inviter.channelInactive()
                == .reportClosed(
                    peer: F.bob,
                    reason: .localDisconnect,
                    finishingHandshake: false,
                    neverEstablished: false
                )
        )
        // The invitee: the invitation told them; neither the accept nor a decline does again.
        var invitee = Stage.inviteeAwaitingDecision.machine()
        #expect(
            invitee.accept(keepaliveInterval: keepaliveInterval, livenessTimeout: livenessTimeout)
                == .establish(F.bob, sending: .accept(.defaultLimits), finishingHandshake: false)
        )
        var declined = Stage.inviteeAwaitingDecision.machine()
        _ = declined.decline(.busy)
        #expect(
            declined.channelInactive()
                == .reportClosed(peer: F.bob, reason: .busy, finishingHandshake: false, neverEstablished: true)
        )
        // A close before the peer's part: the close tells them, and fails the establishment.
        var early = Stage.inviteeAwaitingHello.machine()
        #expect(
            early.channelInactive()
                == .reportClosed(peer: nil, reason: .connectionLost, finishingHandshake: true, neverEstablished: true)
        )
    }

    @Test("the role comes from the machine")
    func role() {
        #expect(makeInviter().isInviter)
        #expect(makeInviter().firstLocalChannel == 1)
        #expect(!makeInvitee().isInviter)
        #expect(makeInvitee().firstLocalChannel == 2)
    }
}
