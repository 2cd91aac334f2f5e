import Testing

/// Waits, polling every 10 ms, until `condition` holds; records an issue after `timeout` (generous: only a test
/// that fails waits for all of it).
func waitFor(
    _ what: String,
    timeout: Duration = .seconds(30) * slowdown,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @Sendable () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("waited \(timeout) for \(what)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
