import Foundation
import PeerConnectivity

/// The responsiveness test, as Crusader and the IETF draft "Responsiveness under Working Conditions"
/// measure a link: four phases of `--time` seconds each (idle, download, upload, both), the loaded ones
/// running `--parallel` load flows one way or both, while probes measure round trips on a connection of
/// their own (foreign) and inside the loaded session (self). Each phase reports its throughput, both
/// kinds' round trips and the RPM they give.
///
/// Each load flow is a session of its own to the reflector (its own TCP connection, as the draft's
/// load-generating connections), opened for its phase and closed after it, carrying one of the bulk test's
/// streams each loaded way; the self probes travel in the first, whose streams wait while the kernel holds
/// the low watermark unsent, as an app's with one set do. The others leave their unsent bytes to
/// `TCP_NOTSENT_LOWAT` alone, so that they load the link as other bulk traffic does: held at the low
/// watermark, flows keep a bloated buffer in the same kernel (the lab's) nearly empty. The foreign probes
/// travel in the run's own session, which carries nothing else. Every session's echoes are timed by its
/// receiver task as it reads them.
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
    ///   - plan: each phase's time (`timeSeconds`) and load flows (`streams`).
    ///   - probe: the session of the foreign probes, which carries nothing else.
    ///   - openLoads: opens that many load flows' sessions, each with its inbox, for one phase; the first
    ///     carries the self probes.
    ///   - counters: the load's bytes, for the interval reports.
    ///   - book: where the probes are counted (and read by the interval reports).
    ///   - notSentLowWatermark: the load sessions' `TCP_NOTSENT_LOWAT`, for the document.
    ///   - datagramProbes: whether `probe`'s UDP path is open, so that probes go as datagrams there too.
    /// - Returns: the test's section of the document.
    /// - Throws: ``BenchError/disconnected(_:)`` when a session has no reflector, or what opening the load
    ///   flows threw.
    static func run(
        _ plan: TestPlan,
        probe: SessionEchoDriver,
        openLoads: (Int) async throws -> [SessionEchoDriver],
        counters: BulkTest.Counters,
        book: ProbeBook,
        notSentLowWatermark: Int?,
        datagramProbes: Bool = false
    ) async throws -> ResponsivenessResult {
        guard let probePeer = probe.reflectorPeer else { throw BenchError.disconnected("not connected") }
        probe.routeProbes(to: book)
        let flowCount = plan.streams ?? 8
        let time = Duration.milliseconds(Int((plan.timeSeconds ?? 5) * 1_000))
        // Each sender on its session's event loop, where the echoes are read: a probe costs no hop to it.
        let foreign = Task(executorPreference: probe.session.taskExecutor) {
            await sendProbes(.foreign, session: probe.session, peer: probePeer, book: book)
        }
        let datagrams =
            datagramProbes
            ? Task(executorPreference: probe.session.taskExecutor) {
                await sendProbes(.datagram, session: probe.session, peer: probePeer, book: book, mode: .unreliable)
            } : nil
        defer {
            foreign.cancel()
            datagrams?.cancel()
        }
        var ran:
            [(
                name: ResponsivenessPhase.Name, seconds: Double, download: BulkDirection?, upload: BulkDirection?,
                links: [LinkSample]?
            )] = []
        let omit = plan.omitSeconds.map { Duration.milliseconds(Int($0 * 1_000)) } ?? .zero
        for (index, name) in phases.enumerated() where !Task.isCancelled {
            // Each loaded phase's flows are new connections, as iperf3's are: none starts with what an earlier
            // phase taught its congestion control.
            let loads = name == .idle ? [] : try await openLoads(flowCount)
            let flows = try loads.map { load in
                guard let peer = load.reflectorPeer, let inbox = load.inbox else {
                    throw BenchError.disconnected("not connected")
                }
                return LoadFlow(session: load.session, peer: peer, inbox: inbox)
            }
            // A loaded phase's probes count once its load has ramped up (`--omit`).
            let omitting = name != .idle && omit > .zero
            book.begin(phase: index, omitting: omitting)
            let settling = Task {
                guard omitting, (try? await Task.sleep(for: omit)) != nil else { return }
                book.settle()
            }
            loads.first?.routeProbes(to: book)
            let own = flows.first.map { first in
                Task(executorPreference: first.session.taskExecutor) {
                    await sendProbes(.selfFlow, session: first.session, peer: first.peer, book: book)
                }
            }
            let started = ContinuousClock.now
            var download: BulkDirection?
            var upload: BulkDirection?
            switch name {
            case .idle:
                try? await Task.sleep(for: time)
            case .download:
                download = await load(flows, reverse: true, for: time, counters: counters)
            case .upload:
                upload = await load(flows, reverse: false, for: time, counters: counters)
            case .both:
                async let reverse = load(flows, reverse: true, for: time, counters: counters)
                async let forward = load(flows, reverse: false, for: time, counters: counters)
                (download, upload) = await (reverse, forward)
            }
            let seconds = started.duration(to: .now).seconds
            // Each flow's connection as the kernel saw it, before the flows close.
            var links: [LinkSample] = []
            for flow in flows {
                if let report = await flow.session.linkReport(for: flow.peer) { links.append(LinkSample(report)) }
            }
            ran.append((name, seconds, download, upload, links.isEmpty ? nil : links))
            settling.cancel()
            own?.cancel()
            // The self probes still out come back, or not, before their session goes.
            await book.awaitOutstanding(upTo: probeGrace, onConnectionsOnly: true)
            for load in loads { await load.close() }
        }
        foreign.cancel()
        datagrams?.cancel()
        await book.awaitOutstanding(upTo: probeGrace)
        var result = ResponsivenessResult(
            loadFlows: flowCount,
            phaseSeconds: plan.timeSeconds ?? 5,
            probeIntervalMilliseconds: probeInterval.seconds * 1_000,
            runnerNotSentLowWatermark: notSentLowWatermark,
            phases: ran.enumerated().map { index, phase in
                var figures = ResponsivenessPhase(
                    name: phase.name,
                    seconds: phase.seconds,
                    download: phase.download,
                    upload: phase.upload,
                    foreign: book.result(.foreign, phase: index),
                    selfProbes: book.result(.selfFlow, phase: index),
                    datagramProbes: datagramProbes ? book.result(.datagram, phase: index) : nil
                )
                figures.loadLinks = phase.links
                return figures
            }
        )
        result.omitSeconds = plan.omitSeconds
        return result
    }

    /// One load flow: a session to the reflector and where its streams and receipts arrive.
    private struct LoadFlow: Sendable {
        let session: Session
        let peer: PeerID
        let inbox: TransferInbox
    }

    /// Every flow loads one way at once, one stream each, for `time`: the reflector writes (`reverse`) or
    /// the runner does. Returns the direction's figures, the flows' added up.
    private static func load(
        _ flows: [LoadFlow],
        reverse: Bool,
        for time: Duration,
        counters: BulkTest.Counters
    ) async -> BulkDirection? {
        let pattern = StreamPattern()
        let direction = reverse ? BulkTest.receiveReverse : BulkTest.sendForward
        let each = await withTaskGroup(of: BulkDirection.self) { group in
            for flow in flows {
                group.addTask {
                    await direction(1, time, flow.session, flow.peer, flow.inbox, pattern, counters)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        return BulkDirection.sum(each)
    }

    /// Sends a probe of `kind` every `interval` (``probeInterval`` unless told) until cancelled or the
    /// session fails. A send held up (the loaded session's queue) delays the next one rather than causing
    /// a burst after it.
    static func sendProbes(
        _ kind: ProbeKind,
        session: Session,
        peer: PeerID,
        book: ProbeBook,
        mode: SendMode = .reliable,
        every interval: Duration = probeInterval
    ) async {
        var next = ContinuousClock.now
        while !Task.isCancelled {
            do {
                try await session.send(book.nextProbe(kind), toPeers: [peer], mode: mode)
            } catch {
                return
            }
            next = max(next + interval, ContinuousClock.now)
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }
}
