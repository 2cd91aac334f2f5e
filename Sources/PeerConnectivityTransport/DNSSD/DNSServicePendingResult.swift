import NIOCore
import NIOPosix
import Synchronization

/// The first result of a DNS-SD operation, delivered once from a callback to one `async` caller.
///
/// The callback side calls ``succeed(_:)`` or ``fail(_:)``; whichever comes first wins and later calls return `false`.
/// The waiting side calls ``value(timeout:timeoutFailure:)``, which also ends with a failure when the time runs out
/// or the calling task is cancelled.
final class DNSServicePendingResult<Value: Sendable>: Sendable {
    /// Where the result stands.
    private enum State {
        /// No result yet; holds the waiting caller's continuation once it waits.
        case pending(CheckedContinuation<Value, any Error>?)
        /// The result, kept for a caller that has not started waiting yet.
        case finished(Result<Value, any Error>)
        /// The result went to the waiting caller.
        case delivered(succeeded: Bool)
    }

    /// The state, behind a lock because callbacks, timers and the caller run on different threads.
    private let state = Mutex<State>(.pending(nil))

    /// Creates an empty pending result.
    init() {}

    /// Whether the operation has succeeded (a later ``fail(_:)`` cannot change that).
    var hasSucceeded: Bool {
        self.state.withLock { state in
            switch state {
            case .pending: return false
            case .finished(.success): return true
            case .finished(.failure): return false
            case .delivered(let succeeded): return succeeded
            }
        }
    }

    /// Whether the result is known: succeeded, failed, timed out or cancelled.
    var isCompleted: Bool {
        self.state.withLock { state in
            if case .pending = state {
                return false
            }
            return true
        }
    }

    /// Completes with a value, unless already completed.
    ///
    /// - Parameter value: The result.
    /// - Returns: `true` when this call completed the result.
    @discardableResult
    func succeed(_ value: Value) -> Bool {
        self.complete(.success(value))
    }

    /// Completes with an error, unless already completed.
    ///
    /// - Parameter error: The failure.
    /// - Returns: `true` when this call completed the result.
    @discardableResult
    func fail(_ error: any Error) -> Bool {
        self.complete(.failure(error))
    }

    /// Waits for the result.
    ///
    /// Call at most once.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait before failing with `timeoutFailure`.
    ///   - timeoutFailure: The error to fail with when the time runs out.
    ///   - eventLoop: Where the timeout's timer runs.
    /// - Returns: The value.
    /// - Throws: The error passed to ``fail(_:)``, `timeoutFailure`, or `CancellationError` when the calling task is
    ///   cancelled.
    func value(
        timeout: Duration,
        timeoutFailure: some Error & Sendable,
        on eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    ) async throws -> Value {
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { [weak self] in
            self?.fail(timeoutFailure)
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let ready: Result<Value, any Error>? = self.state.withLock { state in
                    switch state {
                    case .pending:
                        state = .pending(continuation)
                        return nil
                    case .finished(let result):
                        state = .delivered(succeeded: Self.isSuccess(result))
                        return result
                    case .delivered:
                        preconditionFailure("DNSServicePendingResult.value(timeout:timeoutFailure:) called twice")
                    }
                }
                if let ready {
                    continuation.resume(with: ready)
                }
            }
        } onCancel: {
            self.fail(CancellationError())
        }
    }

    /// Completes with a result, unless already completed, and resumes the waiting caller if there is one.
    ///
    /// - Parameter result: The outcome.
    /// - Returns: `true` when this call completed the result.
    private func complete(_ result: Result<Value, any Error>) -> Bool {
        let (completed, waiter): (Bool, CheckedContinuation<Value, any Error>?) = self.state.withLock { state in
            switch state {
            case .pending(nil):
                state = .finished(result)
                return (true, nil)
            case .pending(let continuation?):
                state = .delivered(succeeded: Self.isSuccess(result))
                return (true, continuation)
            case .finished, .delivered:
                return (false, nil)
            }
        }
        waiter?.resume(with: result)
        return completed
    }

    /// Whether a result is a success.
    ///
    /// - Parameter result: The outcome.
    /// - Returns: `true` for `.success`.
    private static func isSuccess(_ result: Result<Value, any Error>) -> Bool {
        if case .success = result {
            return true
        }
        return false
    }
}
