import Foundation
import PeerConnectivity

/// Runs a plan against a reflector and returns the result document: finds or connects to the
/// reflector, hears its hello, then for each size a warm-up phase and a measured phase.
public enum BenchmarkRunner {
    /// How often the ticker counts timed-out messages as lost and wakes a sender whose deadline passed.
    static let tickInterval: Duration = .milliseconds(5)
    /// How often progress is reported.
    static let progressInterval: UInt64 = 250_000_000

    /// Runs the configuration's plan, and returns its document whatever happens once the plan is valid.
    ///
    /// When the reflector cannot be reached, goes away, or the calling task is cancelled (a signal), the
    /// document holds what completed (sizes, the size under way with what it counted, streams and
    /// resources as far as they got) and ``BenchmarkDocument/error`` says why it stopped.
    ///
    /// - Parameters:
    ///   - configuration: the plan, the reflector and the run's name.
    ///   - progress: called about four times a second during each phase (from another task).
    /// - Returns: the result document.
    /// - Throws: ``BenchError/invalidPlan(_:)`` only, before anything is sent.
    public static func run(
        _ configuration: RunnerConfiguration,
        events: RunEvents = RunEvents()
    ) async throws(BenchError) -> BenchmarkDocument {
        let progress = events.progress
        let plan = configuration.plan
        try plan.validate()
        let startedAt = Date()
        let origin = MonotonicClock.now()
        let pattern = PayloadPattern(maximumSize: plan.sizes.max() ?? 1)
        var document = BenchmarkDocument(
            name: configuration.runName,
            startedAt: startedAt,
            finishedAt: startedAt,
            runner: HostInfo.current(),
            reflector: nil,
            connection: ConnectionReport(setOutFor: configuration),
            plan: plan,
            results: []
        )
        let connection: ReflectorConnection
        do {
            connection = try await ReflectorConnection.open(configuration, pattern: pattern)
        } catch {
            document.error = RunFailure.explain(error, configuration: configuration)
            document.finishedAt = Date()
            return document
        }
        document.reflector = connection.reflectorHost
        document.connection = connection.report
        events.connected?(connection.report, connection.reflectorHost)
        let intervals = IntervalLog(every: plan.intervalSeconds, omitting: plan.omitSeconds, report: events.interval)
        let cpuAtStart = CPUTime.ofThisProcess()
        let testStarted = ContinuousClock.now
        do {
            switch plan.test {
            case .bulk:
                let driver = try sessionDriver(connection)
                if plan.mode == .unreliable { _ = try await awaitDatagramPath(driver) }
                let counters = BulkTest.Counters(streams: plan.streams ?? 1)
                let reporter = Task {
                    await intervals.follow(
                        counters,
                        forward: plan.reverse != true,
                        reverse: plan.reverse == true || plan.bidirectional == true,
                        link: { await driver.linkSample() }
                    )
                }
                let result: Result<BulkTestResult, any Error>
                do {
                    result = .success(try await BulkTest.run(plan, driver: driver, counters: counters))
                } catch {
                    result = .failure(error)
                }
                // The last, partial interval is reported before the totals, and kept in the document.
                reporter.cancel()
                await reporter.value
                document.bulk = try result.get()
            case .responsiveness:
                document.responsiveness = try await runResponsiveness(
                    configuration,
                    probe: try sessionDriver(connection),
                    pattern: pattern,
                    intervals: intervals
                )
                document.responsiveness?.reflectorNotSentLowWatermark = connection.report.reflectorNotSentLowWatermark
            case .stream:
                let driver = try sessionDriver(connection)
                let result = try await StreamTest.run(plan, driver: driver)
                document.streams = result
                // A stream test that lost its reflector says so, as the message tests do.
                let failed = result.streams.contains { $0.error != nil }
                if let departure = await driver.inbox?.departure(within: failed ? .seconds(2) : .zero) {
                    throw departure
                }
            case .resource, .folder:
                let driver = try sessionDriver(connection)
                let result = try await ResourceTest.run(plan, driver: driver)
                document.resources = result
                let failed = result.completed < result.planned
                if let departure = await driver.inbox?.departure(within: failed ? .seconds(2) : .zero) {
                    // A link cut by --interrupt-at that was not resumed: the reflector gave no reconnection.
                    if result.transfers.contains(where: { $0.interruptedAtBytes != nil && $0.outcome != .completed }) {
                        throw BenchError.disconnected(
                            "\(RunFailure.explain(departure, configuration: configuration)) "
                                + "after --interrupt-at cut the link: \(ResourceTest.notResumed)"
                        )
                    }
                    throw departure
                }
            case .data, .rawTCP:
                try await runSizes(
                    plan,
                    driver: connection.driver,
                    origin: origin,
                    intervals: intervals,
                    into: &document.results,
                    progress: progress
                )
            }
            if Task.isCancelled { throw BenchError.interrupted("interrupted") }
        } catch {
            document.error = RunFailure.explain(error, configuration: configuration)
        }
        document.intervals = intervals.recorded
        if let driver = connection.driver as? SessionEchoDriver {
            document.connection.link = await driver.linkSample()
        }
        let elapsed = testStarted.duration(to: .now)
        let runnerCPU = CPUTime.ofThisProcess().since(cpuAtStart)
        let report =
            document.error == nil ? await (connection.driver as? SessionEchoDriver)?.reflectorReport() : nil
        document.cpu = CPUUsage(runner: runnerCPU, reflector: report?.cpu, seconds: elapsed.seconds)
        document.connection.reflectorLink = report?.link
        document.connection.reflectorLinks = report?.links
        let peak = ProcessSample.current().peakResidentBytes
        if peak > 0 {
            document.memory = MemoryUsage(
                runnerPeakResidentBytes: peak,
                reflectorPeakResidentBytes: report?.peakResidentBytes
            )
        }
        document.connection.sharedWith = report?.sharedWith
        document.connection.sharedWithCount = report?.sharedWithCount
        await connection.driver.close()
        document.finishedAt = Date()
        return document
    }

    /// The responsiveness test: the run's session (`probe`) carries the foreign probes; each loaded phase
    /// opens a session for each load flow, straight to the address the run's session reached, whether it was
    /// found by DNS-SD or not.
    private static func runResponsiveness(
        _ configuration: RunnerConfiguration,
        probe: SessionEchoDriver,
        pattern: PayloadPattern,
        intervals: IntervalLog
    ) async throws -> ResponsivenessResult {
        var loads = configuration
        if let peer = probe.reflectorPeer, let endpoints = probe.session.endpoints(of: peer) {
            loads.target = .direct(host: endpoints.remoteAddress, port: endpoints.remotePort)
        }
        let template = loads
        // The datagram probes go once the run's session's UDP path is open; a blocked path leaves them out.
        let datagramProbes = (try? await awaitDatagramPath(probe)) != nil
        // The load's bytes in all (a line per flow each second would bury the probes' round trips).
        let counters = BulkTest.Counters()
        let book = ProbeBook(phases: ResponsivenessTest.phases)
        let reporter = Task {
            await intervals.follow(
                counters,
                forward: true,
                reverse: true,
                probes: book,
                link: { await probe.linkSample() }
            )
        }
        let result: Result<ResponsivenessResult, any Error>
        do {
            result = .success(
                try await ResponsivenessTest.run(
                    configuration.plan,
                    probe: probe,
                    openLoads: { count in try await openLoads(count, like: template, pattern: pattern) },
                    counters: counters,
                    book: book,
                    notSentLowWatermark: configuration.notSentLowWatermark,
                    datagramProbes: datagramProbes
                )
            )
        } catch {
            result = .failure(error)
        }
        reporter.cancel()
        await reporter.value
        return try result.get()
    }

    /// Opens `count` load flows' sessions; all or none (those opened are closed when one fails). A place the
    /// reflector still holds for the flows of the phase before is asked for again, for up to two seconds.
    private static func openLoads(
        _ count: Int,
        like template: RunnerConfiguration,
        pattern: PayloadPattern
    ) async throws -> [SessionEchoDriver] {
        var opened: [SessionEchoDriver] = []
        do {
            for index in 0..<count {
                var configuration = template
                configuration.runName = String("\(template.runName)-load\(index + 1)".utf8.prefix(50)) ?? "load"
                // The first flow carries the self probes: its bytes wait at the low watermark, as an app's
                // with one set; the others leave it to the kernel, as bulk traffic does.
                configuration.gatesUnsentBytes = index == 0
                var attempt = 0
                while true {
                    do {
                        opened.append(
                            try sessionDriver(try await ReflectorConnection.open(configuration, pattern: pattern))
                        )
                        break
                    } catch let error as InvitationError where error.reason == .busy && attempt < 20 {
                        attempt += 1
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
            }
            return opened
        } catch {
            for driver in opened { await driver.close() }
            throw error
        }
    }

    private static func sessionDriver(_ connection: ReflectorConnection) throws -> SessionEchoDriver {
        guard let driver = connection.driver as? SessionEchoDriver else {
            throw BenchError.disconnected("the transfer tests need a session to the reflector")
        }
        return driver
    }

    /// Waits until the session's UDP path to the reflector is open, so that an unreliable test measures
    /// datagrams (``UnreliablePath``); polled every 20 ms, for at most ``UnreliablePath/waitLimit``.
    ///
    /// - Returns: whether the phases must judge the path by their echoes (a reflector that does not probe).
    /// - Throws: ``BenchError/blocked(_:)`` when the path is blocked, or no verdict came.
    private static func awaitDatagramPath(_ driver: any EchoDriver) async throws -> Bool {
        let started = MonotonicClock.now()
        while let report = driver.datagramPath() {
            switch UnreliablePath.decide(report, waited: MonotonicClock.now() - started) {
            case .start: return false
            case .startUnchecked: return true
            case .wait: try await Task.sleep(for: .milliseconds(20))
            case .fail(let error): throw error
            }
        }
        return false
    }

    /// The message tests: for each size, a warm-up phase and a measured phase; each size's result is
    /// added to `results` as it ends, the one under way too when it fails (with what it counted).
    private static func runSizes(
        _ plan: TestPlan,
        driver: any EchoDriver,
        origin: UInt64,
        intervals: IntervalLog,
        into results: inout [SizeResult],
        progress: (@Sendable (PhaseProgress) -> Void)?
    ) async throws {
        var sequence: UInt64 = 1
        var judgesPathByEchoes = plan.mode == .unreliable ? try await awaitDatagramPath(driver) : false
        for size in plan.sizes {
            let warmup = try await runPhase(
                driver,
                plan: plan,
                size: size,
                count: plan.warmup,
                isWarmup: true,
                firstSequence: sequence,
                origin: origin,
                judgesPathByEchoes: judgesPathByEchoes,
                intervals: nil,
                progress: progress
            )
            // Once a datagram came back, the path is not blocked.
            judgesPathByEchoes = judgesPathByEchoes && warmup.result.echoed == warmup.result.arrivedOnConnection ?? 0
            let measured = try await runPhase(
                driver,
                plan: plan,
                size: size,
                count: plan.count,
                isWarmup: false,
                firstSequence: warmup.nextSequence,
                origin: origin,
                judgesPathByEchoes: judgesPathByEchoes,
                intervals: intervals,
                progress: progress
            )
            sequence = measured.nextSequence
            judgesPathByEchoes =
                judgesPathByEchoes && measured.result.echoed == measured.result.arrivedOnConnection ?? 0
            var result = measured.result
            result.warmupSent = warmup.result.sent
            result.warmupEchoed = warmup.result.echoed
            results.append(result)
            if let failure = measured.failure {
                throw failure
            }
        }
    }

    private static func runPhase(
        _ driver: any EchoDriver,
        plan: TestPlan,
        size: Int,
        count: Int,
        isWarmup: Bool,
        firstSequence: UInt64,
        origin: UInt64,
        judgesPathByEchoes: Bool,
        intervals: IntervalLog?,
        progress: (@Sendable (PhaseProgress) -> Void)?
    ) async throws -> (result: SizeResult, nextSequence: UInt64, failure: (any Error)?) {
        guard count > 0 else { return (SizeResult(size: size, planned: 0), firstSequence, nil) }
        let now = MonotonicClock.now()
        let machine = LoadStateMachine(
            size: size,
            count: count,
            plan: plan,
            firstSequence: firstSequence,
            clockOrigin: origin,
            now: now
        )
        let controller = LoadController(
            machine: machine,
            size: size,
            planned: count,
            isWarmup: isWarmup,
            judgesPathByEchoes: judgesPathByEchoes,
            repliesInRead: LoadController.repliesInRead(for: plan),
            now: now
        )
        let ticker = Task {
            var lastReport = MonotonicClock.now()
            while !Task.isCancelled {
                try? await Task.sleep(for: tickInterval)
                let state = controller.tick()
                if let progress, MonotonicClock.now() - lastReport >= progressInterval {
                    progress(state)
                    lastReport = MonotonicClock.now()
                }
                intervals?.poll(controller)
            }
        }
        defer {
            ticker.cancel()
            intervals?.flush(controller)
        }
        var failure: (any Error)?
        do {
            try await withTaskCancellationHandler {
                try await driver.run(controller, size: size)
            } onCancel: {
                controller.fail(BenchError.interrupted("interrupted"))
            }
        } catch {
            // A warm-up that fails ends the run; a measured phase keeps what it counted.
            if isWarmup { throw error }
            failure = error
        }
        var outcome = controller.outcome
        if plan.mode == .unreliable { outcome.result.arrivedOnConnection = controller.arrivalsOnConnection }
        return (outcome.result, outcome.nextSequence, failure)
    }
}
