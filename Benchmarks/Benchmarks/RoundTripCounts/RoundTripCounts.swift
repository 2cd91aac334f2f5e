import BenchmarkPairs
import Dispatch
import Foundation
import PeerConnectivity

/// Round trips of one kind, run from a main that is not async so that valgrind can run it: callgrind then
/// counts the instructions a round trip costs in user space, the same on every run, where this machine's wall
/// clock moves by half. valgrind 3.19 stops with an internal error in the signal thread an async main parks
/// in, so the main thread here waits on a semaphore while a detached task does the work. Both ends run in this
/// process.
///
/// Usage: `RoundTripCounts KIND COUNT`, KIND one of ``kinds`` (the `RoundTrip64B` benchmarks'), COUNT round
/// trips of 64 bytes after a warm-up of ``warmup``. `Scripts/count-instructions.sh` runs each kind at two
/// counts and divides the difference.
@main
enum RoundTripCounts {
    /// The round trips this can run.
    static let kinds = ["rawTCP", "eventLoop", "plain", "responder", "encrypted", "reconnection"]
    /// Round trips before the counted ones.
    static let warmup = 200

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, kinds.contains(arguments[1]), let count = Int(arguments[2]), count >= 0 else {
            FileHandle.standardError.write(Data("usage: RoundTripCounts \(kinds.joined(separator: "|")) COUNT\n".utf8))
            exit(2)
        }
        let kind = arguments[1]
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
        print("\(kind): \(count) round trips after \(warmup)")
    }

    /// What the task failed with, read by the main thread after the semaphore.
    private final class Failure: @unchecked Sendable {
        var error: (any Error)?
    }

    /// Sets up the kind's pair, runs the warm-up and `count` round trips, and stops the pair.
    private static func run(_ kind: String, count: Int) async throws {
        switch kind {
        case "rawTCP":
            let pair = try RawTCPPair()
            defer { pair.stop() }
            try pair.roundTrips(size: 64, count: warmup)
            try pair.roundTrips(size: 64, count: count)
        case "eventLoop":
            let pair = try await EventLoopEchoPair()
            try await pair.roundTrips(count: warmup)
            if count > 0 { try await pair.roundTrips(count: count) }
            await pair.stop()
        default:
            let pair: LoopbackPair
            switch kind {
            case "responder": pair = try await LoopbackPair(encryption: .none, answering: true)
            case "encrypted": pair = try await LoopbackPair(encryption: .required)
            case "reconnection": pair = try await LoopbackPair(encryption: .none, reconnection: true)
            default: pair = try await LoopbackPair(encryption: .none)
            }
            let message = LoopbackPair.message(size: 64)
            if kind == "responder" {
                try await pair.answeredRoundTrips(message, count: warmup)
                if count > 0 { try await pair.answeredRoundTrips(message, count: count) }
            } else {
                try await withTaskExecutorPreference(pair.client.taskExecutor) {
                    try await pair.roundTrips(message, count: warmup)
                    try await pair.roundTrips(message, count: count)
                }
            }
            await pair.stop()
        }
    }
}
