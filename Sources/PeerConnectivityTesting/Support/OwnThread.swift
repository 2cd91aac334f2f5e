import Foundation

/// Runs `body` on a thread of its own and returns what it returns.
///
/// For blocking work in a test (a socket read that waits for the peer, waiting for a child process): on
/// the cooperative pool it would hold one of its threads, of which there are as many as CPUs (two on
/// the test machines), and every test running beside it would stall until it returned. Not the library's
/// file executor either, whose threads read and write resources.
///
/// - Parameter body: the blocking work.
/// - Returns: its result.
/// - Throws: what `body` throws.
package func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
}

/// Runs `body`, which does not throw, on a thread of its own; see ``onOwnThread(_:)-(()->Result)``.
///
/// - Parameter body: the blocking work.
/// - Returns: its result.
package func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
