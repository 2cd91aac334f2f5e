import Foundation
import PeerConnectivity
import Synchronization
import Testing

@testable import PeerConnectivityBench

/// With a window of one, the runner's reader answers an echo with the next message as it reads it, while
/// the sender stays parked: in memory, on a clock the test moves.
@Suite("The next message sent from the read")
struct ReplyInReadTests {
    static let start: UInt64 = 1_000_000_000_000

    /// A phase's controller as the runner makes it for `mode` (replies in the read as its plan allows), unless
    /// `repliesInRead` says otherwise.
    func controller(
        count: Int,
        mode: DeliveryMode = .reliable,
        delayMilliseconds: Double = 0,
        repliesInRead: Bool? = nil
    ) -> LoadController {
        let plan = TestPlan(mode: mode, sizes: [64], count: count, window: 1, delayMilliseconds: delayMilliseconds)
        let machine = LoadStateMachine(
            size: 64,
            count: count,
            plan: plan,
            firstSequence: 1,
            clockOrigin: Self.start,
            now: Self.start
        )
        return LoadController(
            machine: machine,
            size: 64,
            planned: count,
            isWarmup: false,
            repliesInRead: repliesInRead ?? LoadController.repliesInRead(for: plan),
            now: Self.start,
            clock: { Self.start }
        )
    }

    func echo(_ sequence: UInt64) -> PayloadInspection {
        PayloadInspection(sequenceTag: sequence, tagBytes: 8, isIntact: true)
    }

    /// Sends the first message, then parks the sender as the session driver does; returns once it is parked.
    func parkedSender(_ controller: LoadController) async throws -> Task<Void, Never> {
        #expect(try controller.nextSend().action == .send(sequence: 1))
        let (action, generation) = try controller.nextSend()
        guard case .awaitEcho(let deadline) = action else {
            Issue.record("window of one with a message in flight: \(action)")
            return Task {}
        }
        let sender = Task { await controller.wait(until: deadline, after: generation) }
        // Parking is the controller's own state: no sleep, however slow the machine.
        while !controller.senderIsParked { await Task.yield() }
        return sender
    }

    /// Expects the sender woken (the controller resumes it before it returns), then waits for its task: never
    /// waits on a sender still parked, which would wait forever.
    func expectWoken(_ sender: Task<Void, Never>, _ controller: LoadController) async {
        guard !controller.senderIsParked else {
            Issue.record("the sender is still parked")
            return
        }
        await sender.value
    }

    @Test("an echo the parked sender waits for is answered with the next message; the last wakes the sender")
    func answeredWhileParked() async throws {
        let controller = controller(count: 3)
        let sender = try await parkedSender(controller)
        #expect(controller.received(echo(1), at: Self.start + 10, mayReply: true) == 2)
        #expect(controller.senderIsParked, "the sender stays parked while the reader sends")
        #expect(controller.received(echo(2), at: Self.start + 20, mayReply: true) == 3)
        #expect(controller.senderIsParked)
        // All three sent: the phase is the sender's to finish.
        #expect(controller.received(echo(3), at: Self.start + 30, mayReply: true) == nil)
        await expectWoken(sender, controller)
        #expect(try controller.nextSend().action == .finished)
        let result = controller.outcome.result
        #expect((result.sent, result.echoed, result.lost, result.reordered) == (3, 3, 0, 0))
    }

    @Test("a sender that is not parked sends itself: the reader only accounts for the echo")
    func senderNotParked() throws {
        let controller = controller(count: 3)
        #expect(try controller.nextSend().action == .send(sequence: 1))
        #expect(controller.received(echo(1), at: Self.start + 10, mayReply: true) == nil)
        #expect(try controller.nextSend().action == .send(sequence: 2), "the sender's, not sent twice")
        #expect(controller.outcome.result.sent == 2)
    }

    @Test("without replies in the read, or when pacing says wait, the parked sender is woken instead")
    func senderWoken() async throws {
        for controller in [controller(count: 3, repliesInRead: false), controller(count: 3, delayMilliseconds: 5)] {
            let sender = try await parkedSender(controller)
            #expect(controller.received(echo(1), at: Self.start + 10, mayReply: true) == nil)
            await expectWoken(sender, controller)
            #expect(controller.outcome.result.sent == 1)
        }
    }

    @Test("an echo taken where nothing can be sent back (the event reader) wakes the sender, which sends")
    func noReplyWithoutAReader() async throws {
        let controller = controller(count: 3)
        let sender = try await parkedSender(controller)
        #expect(controller.received(echo(1), at: Self.start + 10) == nil)
        await expectWoken(sender, controller)
        #expect(try controller.nextSend().action == .send(sequence: 2))
    }

    @Test("a failed phase sends nothing from the read")
    func failedPhase() async throws {
        let controller = controller(count: 3)
        let sender = try await parkedSender(controller)
        controller.fail(BenchError.disconnected("gone"))
        await expectWoken(sender, controller)
        #expect(controller.received(echo(1), at: Self.start + 10, mayReply: true) == nil)
        #expect(controller.outcome.result.sent == 1)
    }

    @Test("the responder answers a reliable echo with the next payload; an unreliable phase's echoes are only taken")
    func responderReplies() async throws {
        let peer = try PeerID(displayName: "reflector")
        let pattern = PayloadPattern(maximumSize: 64)
        var first = Data(count: 64)
        first.withUnsafeMutableBytes { pattern.write(sequence: 1, into: $0) }

        let reliable = EchoTaker(pattern: pattern, mode: .reliable)
        let controller = controller(count: 2)
        try await reliable.phase.during(controller, size: 64) {
            let sender = try await parkedSender(controller)
            guard case .reply(let next) = reliable.responder.respond(first, peer, .reliable) else {
                Issue.record("the echo was not answered")
                return
            }
            let inspection = next.withUnsafeBytes { pattern.inspect($0, expectedSize: 64) }
            #expect(inspection.isIntact && inspection.sequenceTag == 2 && next.count == 64)
            // The last echo: nothing more to send, the sender is woken to finish.
            guard case .consumed = reliable.responder.respond(next, peer, .reliable) else {
                Issue.record("the last echo was answered or delivered")
                return
            }
            await expectWoken(sender, controller)
            #expect(controller.outcome.result.echoed == 2)
        }

        let unreliable = EchoTaker(pattern: pattern, mode: .unreliable)
        let other = self.controller(count: 2, mode: .unreliable)
        try await unreliable.phase.during(other, size: 64) {
            let sender = try await parkedSender(other)
            // Come on the connection, as before the UDP path is up: still only counted, and counted apart.
            guard case .consumed = unreliable.responder.respond(first, peer, .reliable) else {
                Issue.record("an unreliable phase's echo was answered or delivered")
                return
            }
            await expectWoken(sender, other)
            #expect(other.outcome.result.echoed == 1 && other.arrivalsOnConnection == 1)
        }
    }

    @Test("during a phase, the reflector's report and a notice of eviction go on to the events, not to the phase")
    func controlMessagesDelivered() async throws {
        let peer = try PeerID(displayName: "reflector")
        let taker = EchoTaker(pattern: PayloadPattern(maximumSize: 64), mode: .reliable)
        let controller = controller(count: 2)
        try await taker.phase.during(controller, size: 64) {
            for message in [ReflectorReport.prefix + Data("{}".utf8), RunnerEviction.prefix + Data("{}".utf8)] {
                guard case .deliver = taker.responder.respond(message, peer, .reliable) else {
                    Issue.record("\(String(decoding: message, as: UTF8.self)) was taken as an echo")
                    continue
                }
            }
            #expect(controller.outcome.result.echoed == 0 && controller.outcome.result.corrupted == 0)
        }
    }
}
