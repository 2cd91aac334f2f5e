import Foundation
import PeerConnectivity

/// Runs a plan against a reflector and returns the result document: finds or connects to the
/// reflector, hears its hello, then for each size a warm-up phase and a measured phase.
public enum BenchmarkRunner {
    /// How often the ticker counts timed-out messages as lost and wakes a sender whose deadline passed.
    static let tickInterval: Duration = .milliseconds(5)
    /// How often progress is reported.
    static let progressInterval: UInt64 = 250_000_000

    /// Runs the configuration's plan.
    ///
    /// - Parameters:
    ///   - configuration: the plan, the reflector and the run's name.
    ///   - progress: called about four times a second during each phase (from another task).
    /// - Returns: the result document.
    /// - Throws: ``BenchError`` when the plan is invalid, the reflector is not found or goes away;
    ///   the library's errors when an invitation or a send fails.
    public static func run(
        _ configuration: RunnerConfiguration,
        progress: (@Sendable (PhaseProgress) -> Void)? = nil
    ) async throws -> BenchmarkDocument {
        let plan = configuration.plan
        try plan.validate()
        let startedAt = Date()
        let origin = MonotonicClock.now()
        let pattern = PayloadPattern(maximumSize: plan.sizes.max() ?? 1)
        let connection = try await ReflectorConnection.open(configuration, pattern: pattern)
        var results: [SizeResult] = []
        var streams: StreamTestResult?
        var resources: ResourceTestResult?
        do {
            switch plan.test {
            case .stream:
                let driver = try sessionDriver(connection)
                let result = try await StreamTest.run(plan, driver: driver)
                streams = result
                // A stream test that lost its reflector fails as the message tests do, not with a document.
                let failed = result.streams.contains { $0.error != nil }
                if let departure = await driver.inbox?.departure(within: failed ? .seconds(2) : .zero) {
                    throw departure
                }
            case .resource:
                let driver = try sessionDriver(connection)
                let result = try await ResourceTest.run(plan, driver: driver)
                resources = result
                let failed = result.completed < result.planned
                if let departure = await driver.inbox?.departure(within: failed ? .seconds(2) : .zero) {
                    throw departure
                }
            case .data, .rawTCP:
                results = try await runSizes(plan, driver: connection.driver, origin: origin, progress: progress)
            }
        } catch {
            await connection.driver.close()
            throw error
        }
        await connection.driver.close()
        return BenchmarkDocument(
            name: configuration.runName,
            startedAt: startedAt,
            finishedAt: Date(),
            runner: HostInfo.current(),
            reflector: connection.reflectorHost,
            connection: connection.report,
            plan: plan,
            results: results,
            streams: streams,
            resources: resources
        )
    }

    private static func sessionDriver(_ connection: ReflectorConnection) throws -> SessionEchoDriver {
        guard let driver = connection.driver as? SessionEchoDriver else {
            throw BenchError.disconnected("the transfer tests need a session to the reflector")
        }
        return driver
    }

    /// The message tests: for each size, a warm-up phase and a measured phase.
    private static func runSizes(
        _ plan: TestPlan,
        driver: any EchoDriver,
        origin: UInt64,
        progress: (@Sendable (PhaseProgress) -> Void)?
    ) async throws -> [SizeResult] {
        var results: [SizeResult] = []
        var sequence: UInt64 = 1
        for size in plan.sizes {
            let warmup = try await runPhase(
                driver,
                plan: plan,
                size: size,
                count: plan.warmup,
                isWarmup: true,
                firstSequence: sequence,
                origin: origin,
                progress: progress
            )
            let measured = try await runPhase(
                driver,
                plan: plan,
                size: size,
                count: plan.count,
                isWarmup: false,
                firstSequence: warmup.nextSequence,
                origin: origin,
                progress: progress
            )
            sequence = measured.nextSequence
            var result = measured.result
            result.warmupSent = warmup.result.sent
            result.warmupEchoed = warmup.result.echoed
            results.append(result)
        }
        return results
    }

    private static func runPhase(
        _ driver: any EchoDriver,
        plan: TestPlan,
        size: Int,
        count: Int,
        isWarmup: Bool,
        firstSequence: UInt64,
        origin: UInt64,
        progress: (@Sendable (PhaseProgress) -> Void)?
    ) async throws -> (result: SizeResult, nextSequence: UInt64) {
        guard count > 0 else { return (SizeResult(size: size, planned: 0), firstSequence) }
        let now = MonotonicClock.now()
        let machine = LoadStateMachine(
            size: size,
            count: count,
            plan: plan,
            firstSequence: firstSequence,
            clockOrigin: origin,
            now: now
        )
        let controller = LoadController(machine: machine, size: size, planned: count, isWarmup: isWarmup, now: now)
        let ticker = Task {
            var lastReport = MonotonicClock.now()
            while !Task.isCancelled {
                try? await Task.sleep(for: tickInterval)
                let state = controller.tick()
                if let progress, MonotonicClock.now() - lastReport >= progressInterval {
                    progress(state)
                    lastReport = MonotonicClock.now()
                }
            }
        }
        defer { ticker.cancel() }
        try await driver.run(controller, size: size)
        var outcome = controller.outcome
        if plan.mode == .unreliable { outcome.result.arrivedOnConnection = controller.arrivalsOnConnection }
        return outcome
    }
}
