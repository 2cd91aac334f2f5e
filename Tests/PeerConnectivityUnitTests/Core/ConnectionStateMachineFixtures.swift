import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures

let invitationContext = ByteBuffer(string: "join me")
let keepaliveInterval = TimeAmount.seconds(1)
let livenessTimeout = TimeAmount.seconds(3)

/// A machine for alice inviting `expectedPeer` (bob by default).
func makeInviter(
    expecting expectedPeer: PeerID? = F.bob,
    timeout: TimeAmount = .seconds(30),
    interval: TimeAmount = keepaliveInterval,
    liveness: TimeAmount = livenessTimeout
) -> ConnectionStateMachine {
    let invitation = ConnectionStateMachine.Invitation(
        expectedPeer: expectedPeer,
        context: invitationContext,
        timeout: timeout
    )
    return ConnectionStateMachine(
        localPeer: F.alice,
        role: .inviter(invitation),
        keepaliveInterval: interval,
        livenessTimeout: liveness
    )
}

/// A machine for alice waiting to be invited.
func makeInvitee(interval: TimeAmount = keepaliveInterval, liveness: TimeAmount = livenessTimeout)
    -> ConnectionStateMachine
{
    ConnectionStateMachine(localPeer: F.alice, role: .invitee, keepaliveInterval: interval, livenessTimeout: liveness)
}

let helloFromBob = Frame.hello(Frame.Hello(peer: F.bob))
let inviteFromBob = Frame.invite(
    Frame.Invite(timeoutMilliseconds: 5_000, fields: .defaultLimits, context: invitationContext)
)

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
            _ = machine.frameReceived(.accept(.defaultLimits))
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
                .credit, .done, .block, .have, .resumeSecret, .ack,
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
struct SocketFailure: Error, CustomStringConvertible {
    var description: String { "connection reset by peer" }
}

/// The reason of a `.close` action, or nil.
func closedWith(_ action: ConnectionStateMachine.Action?) -> DisconnectReason? {
    guard case .close(let reason, _) = action else { return nil }
    return reason
}
