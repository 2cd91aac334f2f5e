import BenchmarkPairs
import Dispatch
import Foundation
import PeerConnectivity
import PeerConnectivityBench
import Synchronization

/// Round trips of one kind, run from a main that is not async so that valgrind can run it: callgrind then
/// counts the instructions a round trip costs in user space, the same on every run, where this machine's wall
/// clock moves by half. valgrind 3.19 stops with an internal error in the signal thread an async main parks
/// in, so the main thread here waits on a semaphore while a detached task does the work. Both ends run in this
/// process.
///
/// Usage: `RoundTripCounts KIND COUNT`, KIND one of ``kinds`` (the `RoundTrip64B` benchmarks', and `runner`:
/// the tools' data test, `test-runner run --test data --size 64 --encryption none`, against the reflector in this
/// process), COUNT round trips of 64 bytes after a warm-up of ``warmup``; or `RoundTripCounts resource MIB`, one
/// resource of MIB MiB from one session to another (``ResourceCounts``). The counted round trips lie between two calls of
/// ``countedPhaseBoundary()``, where `Scripts/count-instructions.sh` has callgrind dump its counters: set-up
/// costs a different number of instructions each run (making a P-256 key that has a compact form takes a
/// random number of tries), so it must stay out of the figure.
@main
enum RoundTripCounts {
    /// The round trips this can run.
    enum Kind: String, CaseIterable {
        case rawTCP, eventLoop, plain, responder, encrypted, reconnection, runner, resource
    }
    /// Round trips before the counted ones.
    static let warmup = 200
    /// Calls of ``countedPhaseBoundary()`` so far: what keeps the optimizer from removing them.
    static let boundaries = Atomic<Int>(0)

    /// Called just before the counted round trips and just after them; callgrind dumps its counters as each
    /// call begins (`--dump-before`), so the second dump holds the counted round trips and nothing else.
    @inline(never)
    static func countedPhaseBoundary() {
        boundaries.add(1, ordering: .sequentiallyConsistent)
    }

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let kind = Kind(rawValue: arguments[1]), let count = Int(arguments[2]), count >= 0
        else {
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: RoundTripCounts \(kinds) COUNT\n".utf8))
            exit(2)
        }
        let finished = DispatchSemaphore(value: 0)
        let failure = Failure()
        Task.detached {
            do { try await run(kind, count: count) } catch { failure.error = error }
            finished.signal()
        }
        finished.wait()
        if let error = failure.error {
            FileHandle.standardError.write(Data("RoundTripCounts \(kind): \(error)\n".utf8))
            exit(1)
        }
        print(kind == .resource ? "resource: \(count) MiB after 4" : "\(kind): \(count) round trips after \(warmup)")
    }

    /// What the task failed with, read by the main thread after the semaphore.
    private final class Failure: @unchecked Sendable {
        var error: (any Error)?
    }

    /// Sets up the kind's pair, runs the warm-up and `count` round trips, and stops the pair.
    private static func run(_ kind: Kind, count: Int) async throws {
        let message = LoopbackPair.message(size: 64)
        switch kind {
        case .rawTCP:
            let pair = try RawTCPPair()
            defer { pair.stop() }
            try pair.roundTrips(size: 64, count: warmup)
            countedPhaseBoundary()
            try pair.roundTrips(size: 64, count: count)
            countedPhaseBoundary()
        case .runner:
            try await runnerRoundTrips(count: count)
        case .resource:
            try await ResourceCounts.run(mebibytes: count, boundary: countedPhaseBoundary)
        case .eventLoop:
            let pair = try await EventLoopEchoPair()
            try await pair.roundTrips(count: warmup)
            countedPhaseBoundary()
            if count > 0 { try await pair.roundTrips(count: count) }
            countedPhaseBoundary()
            await pair.stop()
        case .responder:
            let pair = try await LoopbackPair(encryption: .none, answering: true)
            try await pair.answeredRoundTrips(message, count: warmup)
            countedPhaseBoundary()
            if count > 0 { try await pair.answeredRoundTrips(message, count: count) }
            countedPhaseBoundary()
            await pair.stop()
        case .plain, .encrypted, .reconnection:
            let pair = try await LoopbackPair(
                encryption: kind == .encrypted ? .required : .none,
                reconnection: kind == .reconnection
            )
            try await withTaskExecutorPreference(pair.client.taskExecutor) {
                try await pair.roundTrips(message, count: warmup)
                countedPhaseBoundary()
                try await pair.roundTrips(message, count: count)
                countedPhaseBoundary()
            }
            await pair.stop()
        }
    }

    /// The tools' data test with one message in flight, from the runner's connection to the end of its document;
    /// the runner's own warm-up stays in, so only the difference of two counts is a round trip's cost.
    private static func runnerRoundTrips(count: Int) async throws {
        let host = try await InProcessReflector(encryption: .none)
        var configuration = RunnerConfiguration(
            plan: TestPlan(sizes: [64], count: count, warmup: warmup, window: 1, timeoutSeconds: 600),
            target: .direct(host: "127.0.0.1", port: host.port),
            runName: "round-trip-counts",
            connectTimeout: .seconds(60)
        )
        configuration.encryption = .none
        let document = try await BenchmarkRunner.run(
            configuration,
            events: RunEvents(connected: { _, _ in countedPhaseBoundary() })
        )
        countedPhaseBoundary()
        await host.stop()
        if let error = document.error { throw BenchmarkFailure("the runner: \(error)") }
    }
}
