import Foundation
import Testing

@testable import PeerConnectivity

/// A session's own listener takes only peers a member introduced.
@Suite("Mesh listener", .timeLimit(.minutes(1 * slowdown)))
struct MeshListenerTests {
    @Test("a peer nobody introduced is declined at the session's listener and never joins")
    func strangerDeclined() async throws {
        // The listener's handshake timeout far above the grace period: with the default 5 s, a TLS handshake that
        // took more than 2 s on a loaded machine left the grace period no time, and the timeout closed it first.
        var configuration = Session.Configuration.patient
        configuration.handshakeTimeout = .seconds(60) * slowdown
        let session = Session(peer: try PeerID(displayName: "guarded"), configuration: configuration)
        let log = EventLog(session)
        var port = session.runtime.mesh.withLock { $0.machine.listenerPort }
        let deadline = ContinuousClock.now + waitLimit
        while port == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            port = session.runtime.mesh.withLock { $0.machine.listenerPort }
        }
        let listenerPort = try #require(port, "the session's listener was not bound")
        let stranger = Session(peer: try PeerID(displayName: "stranger"))
        let start = ContinuousClock.now
        let error = await #expect(throws: InvitationError.self) {
            try await stranger.connectPeer(host: "127.0.0.1", port: listenerPort, timeout: invitationTimeout)
        }
        let waited = start.duration(to: .now)
        #expect(error?.reason == .declined)
        #expect(waited >= SessionRuntime.introductionGracePeriod - .milliseconds(100), "declined after \(waited)")
        #expect(session.connectedPeers.isEmpty)
        #expect(log.states(of: stranger.peer).allSatisfy { $0.0 != .connected })
    }
}
