import Foundation

/// Waits until `progress` has counted at least `fraction` of its total, for 30 s at most.
func waitFor(_ progress: Progress, fraction: Double) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while Double(progress.completedUnitCount) < fraction * Double(progress.totalUnitCount) {
        guard ContinuousClock.now < deadline else {
            throw FixtureError("progress stuck at \(progress.completedUnitCount)")
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// The bytes a transfer's `progress` says were resumed rather than sent (`resumedByteCountKey`).
func resumedBytes(_ progress: Progress) -> Int64 {
    (progress.userInfo[.resumedByteCountKey] as? NSNumber)?.int64Value ?? 0
}
