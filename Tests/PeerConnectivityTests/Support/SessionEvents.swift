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
            if case .dataReceived(let data, _) = event { return data }
            return nil
        }
    }

    /// Waits until `count` streams have arrived and returns them.
    func waitForStreams(
        _ count: Int,
        timeout: Duration = .seconds(10),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [IncomingStream] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let streams = self.streams
            if streams.count >= count { return streams }
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
        timeout: Duration = .seconds(10),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DisconnectReason?? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let match = states(of: peer).first(where: { $0.0 == state }) { return .some(match.1) }
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
