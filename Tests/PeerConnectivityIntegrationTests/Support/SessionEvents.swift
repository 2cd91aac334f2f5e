import Foundation
import PeerConnectivity
import Synchronization
import Testing

/// Collects a session's events in the background so a test can wait for the one it expects.
final class EventLog: Sendable {
    private let events = Locked<[SessionEvent]>([])
    private let task: Task<Void, Never>

    init(_ session: Session) {
        let events = self.events
        task = Task {
            for await event in session.events {
                events.withLock { $0.append(event) }
            }
        }
    }

    deinit {
        task.cancel()
    }

    var all: [SessionEvent] { events.withLock { $0 } }

    /// The state changes of `peer`, in order, with their reasons.
    func states(of peer: PeerID) -> [(PeerState, DisconnectReason?)] {
        all.compactMap { event in
            if case .peerStateChanged(let changed, let state, let reason) = event, changed == peer {
                return (state, reason)
            }
            return nil
        }
    }

    /// The streams received so far, in order.
    var streams: [IncomingStream] {
        all.compactMap { event in
            if case .streamReceived(let stream) = event { return stream }
            return nil
        }
    }

    /// The data messages received so far, in order.
    var messages: [Data] {
        all.compactMap { event in
            if case .dataReceived(let data, _, _) = event { return data }
            return nil
        }
    }

    /// The resources that started arriving, with their progress.
    var startedResources: [(name: String, progress: Progress)] {
        all.compactMap { event in
            if case .startedReceivingResource(let name, _, let progress) = event { return (name, progress) }
            return nil
        }
    }

    /// The resources that finished arriving (or failed), in order.
    var finishedResources: [(name: String, result: Result<URL, TransferError>)] {
        all.compactMap { event in
            if case .finishedReceivingResource(let name, _, let result) = event { return (name, result) }
            return nil
        }
    }

    /// Waits until `count` resources have finished arriving (or failed) and returns them.
    func waitForResources(
        _ count: Int,
        timeout: Duration = waitLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [(name: String, result: Result<URL, TransferError>)] {
        let deadline = ContinuousClock.now + timeout
        // Each wait looks once more after its deadline: a wait starved of the CPU may wake only after it.
        while true {
            let finished = finishedResources
            if finished.count >= count { return finished }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record(
            "\(finishedResources.count) of \(count) resources finished within \(timeout)",
            sourceLocation: sourceLocation
        )
        return finishedResources
    }

    /// Waits until `count` resources have started arriving and returns their progress.
    func waitForStartedResources(_ count: Int, timeout: Duration = waitLimit) async throws -> [Progress] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, startedResources.count < count {
            try await Task.sleep(for: .milliseconds(2))
        }
        return startedResources.map(\.progress)
    }

    /// Waits until `count` streams have arrived and returns them.
    func waitForStreams(
        _ count: Int,
        timeout: Duration = waitLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [IncomingStream] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let streams = self.streams
            if streams.count >= count { return streams }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(streams.count) of \(count) streams arrived within \(timeout)", sourceLocation: sourceLocation)
        return streams
    }

    /// Waits until `peer` has reached `state`; returns the reason it carried.
    @discardableResult
    func waitFor(
        _ peer: PeerID,
        _ state: PeerState,
        timeout: Duration = waitLimit,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DisconnectReason?? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let match = states(of: peer).first(where: { $0.0 == state }) { return .some(match.1) }
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record(
            "\(peer) did not become \(state) within \(timeout); saw \(states(of: peer))",
            sourceLocation: sourceLocation
        )
        return nil
    }
}

/// Waits for the browser to report `.found` for a peer named `name`.
func waitForFound(_ browser: Browser, named name: String, timeout: Duration) async throws -> PeerID? {
    try await withThrowingTaskGroup(of: PeerID?.self) { group in
        group.addTask {
            for try await event in browser.events {
                if case .found(let peer, _) = event, peer.displayName == name { return peer }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
