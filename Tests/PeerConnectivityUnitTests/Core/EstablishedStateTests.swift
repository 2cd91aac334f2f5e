import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

/// The established state (`EstablishedState`): channel frames, keepalives and liveness, in memory.
@Suite("Connection machine: established")
struct EstablishedStateTests {
    // MARK: - Channels

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
        #expect(closedWith(action)?.detail == "malformed CHUNK frame: channel 3 was never opened")
        #expect(machine.grantCredit(3, on: 1) == .none)
    }

    @Test("an OPEN beyond the limit is answered with RESET refused, and the connection stays up")
    func channelLimit() {
        var machine = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(5),
            maximumIncomingChannels: 1
        )
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        _ = machine.frameReceived(
            .invite(Frame.Invite(timeoutMilliseconds: 1000, fields: .defaultLimits, context: F.buffer("")))
        )
        _ = machine.accept(keepaliveInterval: .seconds(1), livenessTimeout: .seconds(5))
        let first = Frame.Open(channel: 1, kind: .stream, size: 0, name: [0x61])
        let second = Frame.Open(channel: 3, kind: .stream, size: 0, name: [0x62])
        #expect(machine.frameReceived(.open(first)) == .channel(.opened(first), from: F.bob))
        #expect(
            machine.frameReceived(.open(second))
                == .channel(.refuse(channel: 3, .refused, reason: "1 channels are open already"), from: F.bob)
        )
        #expect(machine.isEstablished)
        #expect(machine.resetIncomingChannel(1, .cancelled) == .send([.reset(channel: 1, .cancelled)]))
        let third = Frame.Open(channel: 5, kind: .stream, size: 0, name: [0x63])
        #expect(machine.frameReceived(.open(third)) == .channel(.opened(third), from: F.bob))
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
        #expect(closedWith(action)?.detail == "nothing received for 3.0 s")
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
        #expect(closedWith(machine.keepaliveTick()) == .livenessTimeout)
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
        #expect(closedWith(machine.keepaliveTick()) == .livenessTimeout)  // 3 s
    }

    @Test("a liveness timeout that is not a multiple of the interval closes on the first tick past it")
    func livenessRoundsUp() {
        var machine = makeInviter(interval: .seconds(1), liveness: .milliseconds(2_500))
        _ = machine.channelActive()
        _ = machine.frameReceived(helloFromBob)
        _ = machine.frameReceived(.accept(.defaultLimits))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(machine.keepaliveTick() == .send([.keepalive]))
        #expect(closedWith(machine.keepaliveTick()) == .livenessTimeout)
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
        #expect(closedWith(action) == .livenessTimeout)
        #expect(closedWith(action)?.detail == "nothing received for 1.0 s")
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

    // MARK: - Decisions the handler carries out

    @Test("a RESET of a channel this side opened is the peer's answer to this side's writes")
    func resetOfOwnChannel() {
        // The invitee opens even channels.
        var invitee = Stage.inviteeEstablished.machine()
        #expect(invitee.frameReceived(.reset(channel: 2, .cancelled)) == .resetByPeer(channel: 2, .cancelled))
        let open = Frame.Open(channel: 1, kind: .stream, size: 0, name: [0x61])
        _ = invitee.frameReceived(.open(open))
        #expect(
            invitee.frameReceived(.reset(channel: 1, .cancelled))
                == .channel(.reset(channel: 1, .cancelled), from: F.bob)
        )
        // The inviter opens odd ones.
        var inviter = Stage.inviterEstablished.machine()
        #expect(inviter.frameReceived(.reset(channel: 1, .refused)) == .resetByPeer(channel: 1, .refused))
    }

    @Test("every delivery names the peer, so the handler keeps no copy of it")
    func deliveriesNameThePeer() {
        var machine = Stage.inviterEstablished.machine()
        #expect(machine.frameReceived(.ack(7)) == .deliverAck(7, from: F.bob))
        #expect(machine.frameReceived(.resumeSecret([9])) == .deliverResumeSecret([9], from: F.bob))
        #expect(
            machine.frameReceived(.datagramEndpoint(port: 9, token: 3))
                == .deliverDatagramEndpoint(port: 9, token: 3, from: F.bob)
        )
    }

    @Test("the keepalive interval the handler schedules is the session's once accepted")
    func keepaliveIntervalFromMachine() {
        var machine = Stage.inviteeAwaitingDecision.machine()
        #expect(machine.keepaliveInterval == keepaliveInterval)
        _ = machine.accept(keepaliveInterval: .seconds(7), livenessTimeout: .seconds(21))
        #expect(machine.keepaliveInterval == .seconds(7))
    }

    @Test("reading paused is the machine's state, and set back")
    func readingPausedState() {
        var machine = Stage.inviterEstablished.machine()
        #expect(!machine.isReadingPaused)
        machine.readingPaused(true)
        #expect(machine.isReadingPaused)
        machine.readingPaused(false)
        #expect(!machine.isReadingPaused)
    }
}
