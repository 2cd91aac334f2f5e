import Foundation
import PeerConnectivity
import Synchronization

/// The data test's driver: messages through a ``PeerConnectivity/Session``, echoes taken where the session
/// reads them (``EchoTaker``), everything else read from its events by one receiver task for the whole run.
/// Until a phase starts, the reflector's messages (its hello) go to ``hello(timeout:)``.
final class SessionEchoDriver: EchoDriver {
    let session: Session
    private let echoes: EchoTaker
    private let reflector = Mutex<PeerID?>(nil)
    /// The reflector's notice that it gave this runner's place to a newcomer, once it came.
    private let eviction: EvictionNotice
    private let firstMessages: AsyncThrowingStream<Data, any Error>
    private let receiver: Task<Void, Never>
    /// Where the stream and resource tests get the reflector's streams and its later messages.
    let inbox: TransferInbox?
    /// The reflector's reports, apart from the inbox: a test that stops reading the inbox (by cancelling
    /// its reader, which ends the inbox's sequence) leaves the report still to be read.
    private let reports: AsyncStream<Data>

    /// Starts reading the session's events; call before connecting, so that nothing is missed.
    ///
    /// - Parameters:
    ///   - session: the runner's session, made with `echoes.responder` as its responder.
    ///   - echoes: takes the echoes where they are read; the sender sets its phase.
    ///   - inbox: for the stream and resource tests: receives the streams the reflector opens and its
    ///     messages after the hello. Without one, those streams are cancelled and those messages dropped.
    init(session: Session, echoes: EchoTaker, inbox: TransferInbox? = nil) {
        self.session = session
        self.echoes = echoes
        self.inbox = inbox
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        firstMessages = stream
        let eviction = EvictionNotice()
        self.eviction = eviction
        let (reports, reportContinuation) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .bufferingNewest(4))
        self.reports = reports
        // On the session's event loop, as the echoes are taken there: a session with reconnection calls no
        // responder, and its echoes come here.
        receiver = Task(executorPreference: session.taskExecutor) {
            var heardHello = false
            for await event in session.events {
                switch event {
                // First, as most messages are echoes: the taker leaves a notice or a report alone.
                case .dataReceived(let data, _, let arrivedAs) where echoes.take(data, arrivedAs: arrivedAs):
                    break
                case .dataReceived(let data, _, _) where data.begins(with: RunnerEviction.prefix):
                    eviction.notice.withLock { $0 = RunnerEviction.decoded(from: data) }
                case .dataReceived(let data, _, _) where data.begins(with: ReflectorReport.prefix):
                    reportContinuation.yield(data)
                case .dataReceived(let data, _, _):
                    if !heardHello {
                        heardHello = true
                        continuation.yield(data)
                        continuation.finish()
                    } else {
                        // Between phases of the data test, late echoes are dropped rather than buffered.
                        inbox?.deliver(data)
                    }
                case .peerStateChanged(let peer, .notConnected, let reason):
                    let error = Self.reflectorLeft(peer, reason: reason, evicted: eviction.notice.withLock { $0 })
                    eviction.departed.withLock { $0 = error }
                    echoes.phase.current?.controller.fail(error)
                    continuation.finish(throwing: error)
                    inbox?.fail(error)
                case .streamReceived(let stream):
                    if let inbox { inbox.deliver(stream) } else { stream.cancel() }
                case .peerStateChanged, .startedReceivingResource, .finishedReceivingResource:
                    break
                }
            }
            inbox?.fail(BenchError.disconnected("the session ended"))
            reportContinuation.finish()
        }
    }

    /// Records the reflector the session connected to.
    func connected(to peer: PeerID) {
        reflector.withLock { $0 = peer }
    }

    /// Hands the echoes of latency probes to `book` from now on, timed as they are read.
    func routeProbes(to book: ProbeBook) {
        echoes.routeProbes(to: book)
    }

    /// The reflector, once connected.
    var reflectorPeer: PeerID? {
        reflector.withLock { $0 }
    }

    /// The connection to the reflector as this runner's kernel sees it now (`TCP_INFO`); nil before the
    /// reflector is connected, or where the system does not tell.
    func linkSample() async -> LinkSample? {
        guard let peer = reflectorPeer else { return nil }
        return await session.linkReport(for: peer).map(LinkSample.init)
    }

    /// Waits for the reflector's hello, its first message.
    ///
    /// - Throws: ``BenchError/notAReflector(_:)`` when none comes within `timeout` or it is not a hello.
    func hello(timeout: Duration) async throws -> ReflectorHello {
        let messages = firstMessages
        let first = try await withTimeout(
            timeout,
            orThrow: .notAReflector("the peer sent no reflector hello within \(timeout)")
        ) {
            for try await message in messages { return message }
            throw BenchError.notAReflector("the session ended before the reflector's hello")
        }
        return try ReflectorHello(decoding: first)
    }

    /// Asks the reflector what its process spent since this runner connected and whom else it served, and waits
    /// up to five seconds for the answer (a reflector serving dozens of runners on two cores may take seconds);
    /// nil when none comes (a reflector of an older version does not answer). Called once, at the run's end.
    func reflectorReport() async -> ReflectorReport? {
        guard let peer = reflectorPeer else { return nil }
        do {
            try await session.send(ReflectorReport.request, toPeers: [peer])
        } catch {
            return nil
        }
        let reports = self.reports
        return try? await withTimeout(.seconds(5), orThrow: .disconnected("no report")) {
            for await message in reports {
                if let report = ReflectorReport.decoded(from: message) { return report }
            }
            throw BenchError.disconnected("the session ended")
        }
    }

    func run(_ controller: LoadController, size: Int) async throws {
        guard let peer = reflector.withLock({ $0 }) else { throw BenchError.disconnected("not connected") }
        // The sender runs on the session's event loop, as the receiver does: an echo read there resumes the
        // sender there, and its next message is written there at once. From another thread each round trip
        // cost two more thread wake-ups (the sender's, then the event loop's to write), more than the
        // kernel's own round trip on loopback.
        try await withTaskExecutorPreference(session.taskExecutor) {
            try await echoes.phase.during(controller, size: size) {
                try await send(controller, size: size, to: [peer])
            }
        }
    }

    private func send(_ controller: LoadController, size: Int, to peers: [PeerID]) async throws {
        let mode = echoes.mode.sendMode
        let pattern = echoes.pattern
        // One buffer, rewritten for each message: the session copies it into its frame before `send`
        // returns, so it is never copied on write and no message costs an allocation here.
        var message = Data(count: size)
        while true {
            let (action, generation) = try controller.nextSend()
            switch action {
            case .send(let sequence):
                message.withUnsafeMutableBytes { pattern.write(sequence: sequence, into: $0) }
                do {
                    try await session.send(message, toPeers: peers, mode: mode)
                } catch let error as SessionError where error.peer.map({ error == .peerNotConnected($0) }) == true {
                    // The send saw the reflector gone before the event stream said so: the same failure, as the
                    // stream tells it, since an eviction notice comes in the stream before the departure.
                    let gone =
                        await eviction.departure(within: Self.departureWait)
                        ?? Self.reflectorLeft(
                            error.peer!,
                            reason: error.reason,
                            evicted: eviction.notice.withLock { $0 }
                        )
                    controller.fail(gone)
                    throw gone
                } catch {
                    controller.fail(error)
                    throw error
                }
            case .sleep(let until):
                let now = MonotonicClock.now()
                if until > now { try await Task.sleep(nanoseconds: until - now) }
            case .awaitEcho(let deadline):
                await controller.wait(until: deadline, after: generation)
            case .finished:
                return
            }
        }
    }

    /// How long a send that found the reflector gone waits for the event stream's account of it: the stream has
    /// it queued already, behind the messages that came before, so this bounds only a starved receiver.
    static let departureWait: Duration = .seconds(2)

    /// The failure of a run whose reflector left, seen by the event stream or by a send: the eviction, when
    /// the reflector said it gave this runner's place to a newcomer.
    static func reflectorLeft(_ peer: PeerID, reason: DisconnectReason?, evicted: RunnerEviction? = nil) -> BenchError {
        if let evicted { return evicted.failure }
        return BenchError.disconnected(
            "the reflector \(peer.displayName) left the session (\(reason.map { "\($0)" } ?? "no reason"))"
        )
    }

    func datagramPath() -> DatagramPathReport? {
        reflectorPeer.map { session.datagramPath(to: $0) }
    }

    func close() async {
        await session.disconnect()
        receiver.cancel()
    }
}

/// Where the receiver keeps the reflector's eviction notice for the failure that follows it, and that failure.
private final class EvictionNotice: Sendable {
    let notice = Mutex<RunnerEviction?>(nil)
    /// The failure the event stream reported when the reflector left.
    let departed = Mutex<BenchError?>(nil)

    /// The failure the event stream reports when the reflector left, once it has; nil if it has not within
    /// `timeout`.
    func departure(within timeout: Duration) async -> BenchError? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let failure = departed.withLock({ $0 }) { return failure }
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(5))) != nil else {
                return nil
            }
        }
    }
}
