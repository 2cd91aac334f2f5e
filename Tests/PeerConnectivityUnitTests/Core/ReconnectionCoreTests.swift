import NIOCore
import PeerConnectivityCore
import Testing

private typealias F = Fixtures
private typealias Machine = ConnectionStateMachine

/// `DeliveryLedger` (numbering, acknowledgements, what is sent again) and the RESUME handshake of
/// `ConnectionStateMachine`, in memory.
@Suite("Reconnection core")
struct ReconnectionCoreTests {
    // MARK: - DeliveryLedger

    @Test("a sender keeps each message until it is acknowledged, and counts its bytes")
    func keepsUntilAcknowledged() throws {
        var ledger = DeliveryLedger<String>()
        #expect(ledger.sent("a", bytes: 10) == 0)
        #expect(ledger.sent("b", bytes: 20) == 1)
        #expect(ledger.sent("c", bytes: 30) == 2)
        #expect(ledger.unconfirmedCount == 3 && ledger.retainedBytes == 60)
        #expect(try ledger.acknowledged(upTo: 2) == 2)
        #expect(ledger.unconfirmedCount == 1 && ledger.retainedBytes == 30)
        // A stale, smaller ACK releases nothing.
        #expect(try ledger.acknowledged(upTo: 1) == 0)
        #expect(try ledger.acknowledged(upTo: 3) == 1)
        #expect(ledger.unconfirmedCount == 0 && ledger.retainedBytes == 0)
    }

    @Test("an ACK of more messages than were sent is a violation")
    func ackBeyondSent() {
        var ledger = DeliveryLedger<Int>()
        _ = ledger.sent(1, bytes: 1)
        #expect(throws: DeliveryLedger<Int>.Violation.self) { try ledger.acknowledged(upTo: 2) }
    }

    @Test("resume sends again exactly what the peer lacks, in order, and keeps it until confirmed")
    func resumeSendsWhatIsMissing() throws {
        var ledger = DeliveryLedger<Int>()
        for message in 0..<10 { _ = ledger.sent(message, bytes: 1) }
        _ = try ledger.acknowledged(upTo: 3)
        // The peer received 6 (3 of them unacknowledged when the link dropped).
        #expect(try ledger.resume(peerExpects: 6) == [6, 7, 8, 9])
        #expect(ledger.unconfirmedCount == 4)
        // Numbering goes on after the messages sent again.
        #expect(ledger.sent(10, bytes: 1) == 10)
        #expect(try ledger.resume(peerExpects: 11) == [])
    }

    @Test("resume refuses counts outside what was sent and not confirmed")
    func resumeRefusesImpossibleCounts() throws {
        var ledger = DeliveryLedger<Int>()
        for message in 0..<5 { _ = ledger.sent(message, bytes: 1) }
        _ = try ledger.acknowledged(upTo: 3)
        #expect(throws: DeliveryLedger<Int>.Violation.self) { try ledger.resume(peerExpects: 6) }
        #expect(throws: DeliveryLedger<Int>.Violation.self) { try ledger.resume(peerExpects: 2) }
        #expect(try ledger.resume(peerExpects: 3) == [3, 4])
    }

    @Test("abandon reports every unconfirmed message and keeps none")
    func abandonReportsUnconfirmed() throws {
        var ledger = DeliveryLedger<Int>()
        for message in 0..<5 { _ = ledger.sent(message, bytes: 4) }
        _ = try ledger.acknowledged(upTo: 2)
        #expect(ledger.abandon() == [2, 3, 4])
        #expect(ledger.unconfirmedCount == 0 && ledger.retainedBytes == 0)
    }

    @Test("a ledger that stops retaining keeps numbering but no messages")
    func stopRetaining() {
        var ledger = DeliveryLedger<Int>()
        _ = ledger.sent(0, bytes: 100)
        ledger.stopRetaining()
        #expect(ledger.retainedBytes == 0 && !ledger.retaining)
        #expect(ledger.sent(1, bytes: 100) == 1)
        #expect(ledger.retainedBytes == 0 && ledger.unconfirmedCount == 0)
    }

    @Test("the receiver acknowledges in batches of messages or bytes, and arms the timer once per ACK owed")
    func acknowledgementBatches() {
        var ledger = DeliveryLedger<Int>(ackEveryMessages: 3, ackEveryBytes: 1000)
        #expect(ledger.ackDue() == nil)
        #expect(ledger.received(bytes: 1) == .deliverAndArmAckTimer)
        #expect(ledger.received(bytes: 1) == .deliver, "armed already")
        #expect(ledger.received(bytes: 1) == .deliverAndAck(3))
        #expect(ledger.ackDue() == nil, "the timer fires with nothing owed")
        #expect(ledger.received(bytes: 1) == .deliverAndArmAckTimer)
        #expect(ledger.ackDue() == 4)
        #expect(ledger.ackDue() == nil)
        #expect(ledger.received(bytes: 1000) == .deliverAndAck(5))
        #expect(ledger.nextExpected == 5)
        #expect(ledger.received(bytes: 1) == .deliverAndArmAckTimer)
        ledger.resumed()
        #expect(ledger.received(bytes: 1) == .deliverAndArmAckTimer, "a resume disarms the timer")
    }

    @Test("two ledgers across a drop: every message arrives once, in order")
    func endToEndAcrossDrop() throws {
        var sender = DeliveryLedger<Int>(ackEveryMessages: 4)
        var receiver = DeliveryLedger<Int>(ackEveryMessages: 4)
        var delivered: [Int] = []
        var wire: [Int] = []  // messages in flight on the connection
        for message in 0..<10 {
            _ = sender.sent(message, bytes: 1)
            wire.append(message)
        }
        // Six arrive; the ACK of 4 reaches the sender; the rest is lost with the connection.
        for message in wire.prefix(6) {
            if case .deliverAndAck(let count) = receiver.received(bytes: 1) {
                _ = try sender.acknowledged(upTo: count)
            }
            delivered.append(message)
        }
        wire = []
        // More is sent while the link is down: only kept.
        for message in 10..<13 { _ = sender.sent(message, bytes: 1) }
        // RESUME: the receiver says it has 6.
        let again = try sender.resume(peerExpects: receiver.nextExpected)
        receiver.resumed()
        for message in again {
            _ = receiver.received(bytes: 1)
            delivered.append(message)
        }
        #expect(delivered == Array(0..<13))
        #expect(receiver.nextExpected == 13)
    }

    // MARK: - The RESUME handshake

    private static let secret = Array(repeating: UInt8(0x42), count: WireProtocol.resumeSecretLength)

    private func makeResumer() -> Machine {
        let resumption = Machine.Resumption(
            expectedPeer: F.bob,
            secret: Self.secret,
            nextExpected: 5,
            timeout: .seconds(5)
        )
        return Machine(
            localPeer: F.alice,
            role: .resumer(resumption),
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3)
        )
    }

    @Test("the resumer sends HELLO and RESUME at once, and is established by RESUMED")
    func resumerHandshake() {
        var machine = makeResumer()
        let resume = Frame.resume(Frame.Resume(peer: F.alice.id, secret: Self.secret, nextExpected: 5))
        #expect(
            machine.channelActive()
                == .scheduleDeadline(.seconds(5), sending: [.hello(Frame.Hello(peer: F.alice)), resume])
        )
        #expect(machine.frameReceived(.hello(Frame.Hello(peer: F.bob))) == .peerIdentified(F.bob))
        #expect(!machine.isEstablished)
        #expect(
            machine.frameReceived(.resumed(nextExpected: 9))
                == .establishResumed(F.bob, peerExpects: 9, sending: nil, finishingHandshake: true)
        )
        #expect(machine.isEstablished)
        #expect(machine.frameReceived(.ack(3)) == .deliverAck(3, from: F.bob))
        #expect(machine.frameReceived(.resumeSecret(Self.secret)) == .deliverResumeSecret(Self.secret, from: F.bob))
    }

    @Test("a resumer answered by another peer closes with unexpected peer")
    func resumerWrongPeer() {
        var machine = makeResumer()
        _ = machine.channelActive()
        let action = machine.frameReceived(.hello(Frame.Hello(peer: F.eve)))
        guard case .close(let reason, let goodbye) = action else {
            Issue.record("expected close, got \(action)")
            return
        }
        #expect(reason == .unexpectedPeer && goodbye == .goodbye(.unexpectedPeer))
    }

    @Test("a refused resume closes with the reason the peer gave")
    func resumerRefused() {
        var machine = makeResumer()
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        #expect(machine.frameReceived(.decline(.resumeRefused)) == .close(.resumeRefused, sending: nil))
    }

    @Test("a resumer that receives ACCEPT (an invitation's answer) breaks the protocol")
    func resumerGetsAccept() {
        var machine = makeResumer()
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        guard case .close(let reason, _) = machine.frameReceived(.accept(.defaultLimits)) else {
            Issue.record("expected close")
            return
        }
        #expect(reason == .protocolViolation)
    }

    @Test("the invitee hands RESUME to its owner, and RESUMED goes out when it is accepted")
    func inviteeAcceptsResume() {
        var machine = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3)
        )
        _ = machine.channelActive()
        #expect(machine.frameReceived(.hello(Frame.Hello(peer: F.bob))) == .none)
        let resume = Frame.resume(Frame.Resume(peer: F.bob.id, secret: Self.secret, nextExpected: 4))
        #expect(
            machine.frameReceived(resume)
                == .deliverResume(from: F.bob, secret: Self.secret, peerExpects: 4, deadline: .seconds(10))
        )
        // DATA before the answer is still a violation.
        let accepted = machine.acceptResume(
            nextExpected: 11,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3)
        )
        #expect(
            accepted
                == .establishResumed(
                    F.bob,
                    peerExpects: 4,
                    sending: .resumed(nextExpected: 11),
                    finishingHandshake: false
                )
        )
        #expect(machine.isEstablished)
        #expect(
            machine.acceptResume(nextExpected: 11, keepaliveInterval: .seconds(1), livenessTimeout: .seconds(3)) == nil
        )
    }

    @Test("the invitee declines a RESUME, or closes on one naming another peer than HELLO")
    func inviteeDeclinesResume() {
        var machine = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3)
        )
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        _ = machine.frameReceived(.resume(Frame.Resume(peer: F.bob.id, secret: Self.secret, nextExpected: 0)))
        #expect(machine.decline(.resumeRefused) == .close(.resumeRefused, sending: .decline(.resumeRefused)))

        var other = Machine(
            localPeer: F.alice,
            role: .invitee,
            keepaliveInterval: .seconds(1),
            livenessTimeout: .seconds(3)
        )
        _ = other.channelActive()
        _ = other.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        let action = other.frameReceived(.resume(Frame.Resume(peer: F.eve.id, secret: Self.secret, nextExpected: 0)))
        guard case .close(let reason, _) = action else {
            Issue.record("expected close, got \(action)")
            return
        }
        #expect(reason == .protocolViolation)
    }

    @Test("RESUME-SECRET and ACK before establishment break the protocol")
    func resumeFramesBeforeEstablishment() {
        for frame in [Frame.resumeSecret(Self.secret), .ack(1), .resumed(nextExpected: 1)] {
            var machine = Machine(
                localPeer: F.alice,
                role: .invitee,
                keepaliveInterval: .seconds(1),
                livenessTimeout: .seconds(3)
            )
            _ = machine.channelActive()
            _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
            guard case .close(let reason, _) = machine.frameReceived(frame) else {
                Issue.record("expected close for \(frame.type)")
                continue
            }
            #expect(reason == .protocolViolation)
        }
    }

    @Test("a resumer that gets no answer in time closes without GOODBYE")
    func resumerTimeout() {
        var machine = makeResumer()
        _ = machine.channelActive()
        _ = machine.frameReceived(.hello(Frame.Hello(peer: F.bob)))
        #expect(machine.deadlinePassed() == .close(.timedOut, sending: nil))
    }

    @Test("GOODBYE 6 from the peer (it heard nothing from us) reads as a liveness timeout, not as leaving")
    func peerLivenessGoodbye() {
        var machine = Stage.inviteeEstablished.machine()
        #expect(machine.frameReceived(.goodbye(.livenessTimeout)) == .close(.livenessTimeout, sending: nil))
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .livenessTimeout))
    }

    @Test("a connection that ends inside a frame once connected is lost, not a violation; before, a violation")
    func truncationOnceConnected() {
        var machine = Stage.inviterEstablished.machine()
        let action = machine.errorCaught(ProtocolError.truncatedFrame(bytesLeft: 7))
        #expect(action == .close(.connectionLost, sending: nil))
        #expect(machine.channelInactive().reportedClose == ReportedClose(peer: F.bob, reason: .connectionLost))
        var handshaking = Stage.inviterAwaitingAnswer.machine()
        #expect(
            handshaking.errorCaught(ProtocolError.truncatedFrame(bytesLeft: 7))
                == .close(.protocolViolation, sending: .goodbye(.protocolViolation))
        )
    }

    // MARK: - Wire format

    @Test("the reconnection frames, byte by byte")
    func wireBytes() {
        func bytes(_ frame: Frame) -> [UInt8] { Array(FrameEncoder.buffer(for: frame).readableBytesView) }
        #expect(bytes(.ack(0x0102)) == [0, 0, 0, 9, 0x19, 0, 0, 0, 0, 0, 0, 0x01, 0x02])
        #expect(bytes(.resumed(nextExpected: 7)) == [0, 0, 0, 9, 0x18, 0, 0, 0, 0, 0, 0, 0, 7])
        #expect(bytes(.resumeSecret(Self.secret)) == [0, 0, 0, 17, 0x16] + Self.secret)
        let resume = bytes(.resume(Frame.Resume(peer: F.bob.id, secret: Self.secret, nextExpected: 3)))
        let id = withUnsafeBytes(of: F.bob.id.uuid) { Array($0) }
        #expect(resume == [0, 0, 0, 41, 0x17] + id + Self.secret + [0, 0, 0, 0, 0, 0, 0, 3])
    }

    @Test("malformed reconnection frames are refused")
    func malformed() {
        for (type, payload) in [
            (UInt8(0x16), [UInt8](repeating: 1, count: 15)), (0x17, [UInt8](repeating: 1, count: 39)),
            (0x18, [1, 2, 3]), (0x19, [UInt8](repeating: 0, count: 9)),
        ] {
            var buffer = ByteBuffer(bytes: F.rawFrame(type: type, payload: payload))
            #expect(throws: ProtocolError.self) { try FrameParser.parse(&buffer, maximumFrameLength: F.sessionLimit) }
        }
    }

    @Test("the new reasons have their codes")
    func reasons() {
        #expect(DisconnectReason.reconnectionFailed.wireValue == 23)
        #expect(DisconnectReason.resumeRefused.wireValue == 24)
        #expect(DisconnectReason(wireValue: 24) == .resumeRefused)
        #expect(
            DisconnectReason.reconnectionFailed.with(unconfirmedMessages: 3).with(detail: "x").unconfirmedMessages == 3
        )
    }
}
