import Observation
import PeerConnectivity
import Testing

/// Waits, polling on the main actor, until `condition` holds; records an issue after `timeout` (``waitLimit``).
///
/// - Returns: whether it held in time.
@MainActor
@discardableResult
func eventually(
    timeout: Duration = waitLimit,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
            return false
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Waits, trying `condition` every `interval`, until it holds; records an issue after `timeout`. For
/// conditions that must await (asking a child process), where ``eventually(timeout:sourceLocation:_:)`` polls a
/// plain one.
///
/// - Returns: whether it held in time.
@discardableResult
func eventually(
    every interval: Duration,
    timeout: Duration = waitLimit,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
            return false
        }
        try await Task.sleep(for: interval)
    }
    return true
}

/// A flag that Observation sets when something `read` reads is about to change.
@MainActor
func observeChange(_ read: () -> Void) -> Locked<Bool> {
    let changed = Locked(false)
    withObservationTracking(read) {
        changed.withLock { $0 = true }
    }
    return changed
}

/// Why `body`'s invitation failed (the reason of the `InvitationError` it threw); `nil`, and an issue,
/// when it did not fail or failed otherwise.
func invitationFailureReason(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> DisconnectReason? {
    do {
        try await body()
        Issue.record("expected the connection to fail", sourceLocation: sourceLocation)
        return nil
    } catch let error as InvitationError {
        return error.reason
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
