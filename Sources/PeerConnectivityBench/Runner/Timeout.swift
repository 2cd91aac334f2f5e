/// Runs `operation`, or throws `error` if it has not finished after `timeout` (it is then cancelled).
func withTimeout<Result: Sendable>(
    _ timeout: Duration,
    orThrow error: BenchError,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else { throw error }
        return result
    }
}
