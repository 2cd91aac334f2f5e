import PeerConnectivity

extension ResourceTransfer {
    /// Waits for the transfer as ``ResourceTransfer/wait()`` does, for at most `timeout`; past it, cancels it and
    /// throws an error saying how far it got and what `state()` describes (the receiving side's view).
    ///
    /// A transfer that stalls then fails with what was seen, instead of running into the suite's time limit, which
    /// says nothing of where it stopped.
    func wait(
        within timeout: Duration = waitLimit,
        state: @escaping @Sendable () -> String
    ) async throws {
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.wait()
                return true
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            let first = try await group.next() ?? false
            if !first { cancel() }
            group.cancelAll()
            return first
        }
        guard !finished else { return }
        throw FixtureError(
            """
            \(name) did not finish within \(timeout): \(progress.completedUnitCount) of \(progress.totalUnitCount) \
            bytes kept by the peer; \(state())
            """
        )
    }
}
