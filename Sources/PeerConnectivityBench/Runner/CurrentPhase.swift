import Foundation
import Synchronization

/// The phase a driver's receiver hands echoes to: set by the sender for the length of a phase, nil
/// between phases.
final class CurrentPhase: Sendable {
    /// A phase and its message size.
    struct Phase: Sendable {
        var controller: LoadController
        var size: Int
    }

    private let phase = Mutex<Phase?>(nil)

    /// The phase running now, if any.
    var current: Phase? {
        phase.withLock { $0 }
    }

    /// Runs `body` with `controller` as the current phase.
    func during<Result>(_ controller: LoadController, size: Int, _ body: () async throws -> Result) async rethrows
        -> Result
    {
        phase.withLock { $0 = Phase(controller: controller, size: size) }
        defer { phase.withLock { $0 = nil } }
        return try await body()
    }

    /// Runs `send` on a thread of its own with `controller` as the current phase, and waits for it: the
    /// raw baseline's senders block in socket writes and waits, off the concurrency pool.
    func during(_ controller: LoadController, size: Int, onThread send: @escaping @Sendable () throws -> Void)
        async throws
    {
        try await during(controller, size: size) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let thread = Thread {
                    do {
                        try send()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                thread.start()
            }
        }
    }
}
