import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

/// The closing and closed states (`ClosingState`, `closed(reason)`): GOODBYE, errors, protocol
/// violations and the close, reported once.
@Suite("Connection machine: closing and closed")
struct ClosingStateTests {
    // MARK: - Out-of-order frames

    @Test("every frame out of order closes with protocolViolation and a GOODBYE", arguments: Stage.forbiddenPairs)
    func outOfOrder(stage: Stage, type: FrameType) {
        var machine = stage.machine()
        let action = machine.frameReceived(F.sample(type))
        #expect(action == .close(.protocolViolation, sending: .goodbye(.protocolViolation)))
        let expectedDetail = ProtocolError.unexpectedFrame(type, state: stage.stateWords).description
        #expect(closedWith(action)?.detail == expectedDetail)
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
        #expect(invitee.frameReceived(.accept(.defaultLimits)) == violation)
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
        let channelFrames: Set<FrameType> = [.open, .chunk, .end, .reset, .credit, .done, .block, .have]
        for type in stage.allowed where !channelFrames.contains(type) {
            var machine = stage.machine()
            #expect(closedWith(machine.frameReceived(F.sample(type))) != .protocolViolation, "\(type)")
        }
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
        #expect(closedWith(action)?.detail?.hasPrefix("peer said: ") == true)
        #expect(!machine.isEstablished)
        #expect(machine.peer == F.bob)
        #expect(machine.frameReceived(.data(F.buffer("late"))) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .peerDisconnected))
        #expect(machine.channelInactive() == .none)
        #expect(machine.peer == nil)
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
        #expect(closedWith(action)?.detail == ProtocolError.badMagic.description)
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
        #expect(closedWith(action)?.detail == "connection reset by peer")
        #expect(machine.errorCaught(SocketFailure()) == .none)
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: stage.peer, reason: .connectionLost))
    }

    // MARK: - Closed

    @Test("the reason stays once closed, and the connection counts as closing")
    func reasonOnceClosed() {
        var machine = Stage.inviterEstablished.machine()
        _ = machine.close(.sessionFull)
        #expect(machine.closeReason == .sessionFull)
        _ = machine.channelInactive()
        #expect(machine.closeReason == .sessionFull)
        #expect(machine.isClosing)
        #expect(!machine.wasEstablished)
    }

    @Test("a TLS error before the connection is established is a failed TLS handshake; else a lost connection")
    func tlsErrors() {
        var plain = Stage.inviteeAwaitingInvite.machine()
        #expect(plain.tlsErrorCaught(SocketFailure()) == .close(.connectionLost, sending: nil))
        var secure = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: keepaliveInterval,
            livenessTimeout: livenessTimeout,
            encryption: .optional
        )
        _ = secure.channelActive()
        #expect(
            secure.frameReceived(.hello(Frame.Hello(peer: F.bob, encryption: .optional))) == .startTLS(asClient: false)
        )
        #expect(secure.isEncrypted)
        #expect(secure.tlsErrorCaught(SocketFailure()) == .close(.securityFailed, sending: nil))
        #expect(secure.tlsErrorCaught(SocketFailure()) == .none)
    }

    @Test("only this side's own orderly GOODBYE lingers, and only without TLS")
    func lingering() {
        #expect(Machine.lingers(after: .goodbye(.localDisconnect), encrypted: false))
        #expect(Machine.lingers(after: .goodbye(.localDisconnect.with(unconfirmedMessages: 3)), encrypted: false))
        #expect(!Machine.lingers(after: .goodbye(.localDisconnect), encrypted: true), "TLS waits for close_notify")
        #expect(!Machine.lingers(after: .goodbye(.protocolViolation), encrypted: false), "a hostile peer holds nothing")
        #expect(!Machine.lingers(after: .goodbye(.livenessTimeout), encrypted: false))
        #expect(!Machine.lingers(after: .decline(.declined), encrypted: false))
        #expect(!Machine.lingers(after: nil, encrypted: false))
    }
}
