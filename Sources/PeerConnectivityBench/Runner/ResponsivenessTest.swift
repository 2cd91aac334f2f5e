import Foundation
import PeerConnectivity

/// The responsiveness test, as Crusader and the IETF draft "Responsiveness under Working Conditions"
/// measure a link: four phases of `--time` seconds each (idle, download, upload, both), the loaded ones
/// running `--parallel` load flows one way or both, while probes measure round trips on a connection of
/// their own (foreign) and inside the loaded session (self). Each phase reports its throughput, both
/// kinds' round trips and the RPM they give.
///
/// The load flows are the bulk test's streams, in the loaded session; the foreign probes travel in a
/// second session to the reflector, which carries nothing else. Both sessions' echoes are timed by their
/// receiver tasks as they are read.
enum ResponsivenessTest {
    /// The time between two probes of each kind.
    static let probeInterval = Duration.milliseconds(20)
    /// How long after the last phase the probes still out may come back before they count as unanswered.
    static let probeGrace = Duration.seconds(3)
    /// The phases, in the order they run.
    static let phases = ResponsivenessPhase.Name.allCases

    /// Runs the test.
    ///
    /// - Parameters:
    ///   - plan: the load flows (`streams`) and each phase's time (`timeSeconds`).
    ///   - load: the loaded session, with its inbox.
    ///   - probe: the session of the foreign probes.
    ///   - counters: the load's bytes, for the interval reports.
    ///   - book: where the probes are counted (and read by the interval reports).
    ///   - notSentLowWatermark: the loaded session's `TCP_NOTSENT_LOWAT`, for the document.
    /// - Returns: the test's section of the document.
    /// - Throws: ``BenchError/disconnected(_:)`` when a session has no reflector.
    static func run(
        _ plan: TestPlan,
        load: SessionEchoDriver,
        probe: SessionEchoDriver,
        counters: BulkTest.Counters,
        book: ProbeBook,
        notSentLowWatermark: Int?
    ) async throws -> ResponsivenessResult {
        guard let loadPeer = load.reflectorPeer, let inbox = load.inbox, let probePeer = probe.reflectorPeer else {
            throw BenchError.disconnected("not connected")
        }
        load.routeProbes(to: book)
        probe.routeProbes(to: book)
        let flows = plan.streams ?? 8
        let time = Duration.milliseconds(Int((plan.timeSeconds ?? 5) * 1_000))
        // Each sender on its session's event loop, where the echoes are read: a probe costs no hop to it.
        let senders = [
            Task(executorPreference: probe.session.taskExecutor) {
                await sendProbes(.foreign, session: probe.session, peer: probePeer, book: book)
            },
            Task(executorPreference: load.session.taskExecutor) {
                await sendProbes(.selfFlow, session: load.session, peer: loadPeer, book: book)
            },
        ]
        var ran: [(name: ResponsivenessPhase.Name, seconds: Double, download: BulkDirection?, upload: BulkDirection?)] =
            []
        let pattern = StreamPattern()
        for (index, name) in phases.enumerated() where !Task.isCancelled {
            book.begin(phase: index)
            let started = ContinuousClock.now
            let download: BulkDirection?
            let upload: BulkDirection?
            switch name {
            case .idle:
                try? await Task.sleep(for: time)
                (download, upload) = (nil, nil)
            case .download:
                download = await BulkTest.receiveReverse(
                    flows,
                    for: time,
                    session: load.session,
                    peer: loadPeer,
                    inbox: inbox,
                    pattern: pattern,
                    counters: counters
                )
                upload = nil
            case .upload:
                upload = await BulkTest.sendForward(
                    flows,
                    for: time,
                    session: load.session,
                    peer: loadPeer,
                    inbox: inbox,
                    pattern: pattern,
                    counters: counters
                )
                download = nil
            case .both:
                async let reverse = BulkTest.receiveReverse(
                    flows,
                    for: time,
                    session: load.session,
                    peer: loadPeer,
                    inbox: inbox,
                    pattern: pattern,
                    counters: counters
                )
                async let forward = BulkTest.sendForward(
                    flows,
                    for: time,
                    session: load.session,
                    peer: loadPeer,
                    inbox: inbox,
                    pattern: pattern,
                    counters: counters
                )
                (download, upload) = await (reverse, forward)
            }
            ran.append((name, started.duration(to: .now).seconds, download, upload))
        }
        for sender in senders { sender.cancel() }
        await book.awaitOutstanding(upTo: probeGrace)
        return ResponsivenessResult(
            loadFlows: flows,
            phaseSeconds: plan.timeSeconds ?? 5,
            probeIntervalMilliseconds: probeInterval.seconds * 1_000,
            runnerNotSentLowWatermark: notSentLowWatermark,
            phases: ran.enumerated().map { index, phase in
                ResponsivenessPhase(
                    name: phase.name,
                    seconds: phase.seconds,
                    download: phase.download,
                    upload: phase.upload,
                    foreign: book.result(.foreign, phase: index),
                    selfProbes: book.result(.selfFlow, phase: index)
                )
            }
        )
    }

    /// Sends a probe of `kind` every ``probeInterval`` until cancelled or the session fails. A send held
    /// up (the loaded session's queue) delays the next one rather than causing a burst after it.
    private static func sendProbes(_ kind: ProbeKind, session: Session, peer: PeerID, book: ProbeBook) async {
        var next = ContinuousClock.now
        while !Task.isCancelled {
            do {
                try await session.send(book.nextProbe(kind), toPeers: [peer])
            } catch {
                return
            }
            next = max(next + probeInterval, ContinuousClock.now)
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }
}
