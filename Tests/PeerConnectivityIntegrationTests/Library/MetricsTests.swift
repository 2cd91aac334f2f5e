import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import PeerConnectivityTransport
import Testing

/// The library's swift-metrics counters and timers move with real connections on loopback.
///
/// Other tests of the process may connect meanwhile (not in parallel: the suite runs serially), so
/// each check asks for at least what this test did.
@Suite("Metrics: connections, handshakes, traffic and refusals", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct MetricsTests {
    init() {
        _ = SharedTestMetrics.backend
    }

    private static let outbound = [(PeerMetrics.direction, PeerMetrics.outbound)]
    private static let inbound = [(PeerMetrics.direction, PeerMetrics.inbound)]

    private static func closed(_ reason: DisconnectReason) -> Int64 {
        SharedTestMetrics.total(PeerMetrics.connectionsClosed, [(PeerMetrics.reason, PeerMetrics.reasonName(reason))])
    }

    @Test("two sessions: connections each way, handshakes timed, bytes and frames each way, closes by reason")
    func sessionTraffic() async throws {
        let openedOut = SharedTestMetrics.total(PeerMetrics.connectionsOpened, Self.outbound)
        let openedIn = SharedTestMetrics.total(PeerMetrics.connectionsOpened, Self.inbound)
        let handshakesOut = SharedTestMetrics.total(PeerMetrics.handshakesCompleted, Self.outbound)
        let handshakesIn = SharedTestMetrics.total(PeerMetrics.handshakesCompleted, Self.inbound)
        let timedOut = SharedTestMetrics.durations(PeerMetrics.handshakeDuration, Self.outbound).count
        let bytesSent = SharedTestMetrics.total(PeerMetrics.bytesSent)
        let bytesReceived = SharedTestMetrics.total(PeerMetrics.bytesReceived)
        let framesSent = SharedTestMetrics.total(PeerMetrics.framesSent)
        let framesReceived = SharedTestMetrics.total(PeerMetrics.framesReceived)
        let closedLocally = Self.closed(.localDisconnect)
        let closedByPeer = Self.closed(.peerDisconnected)

        let pair = try await SessionPair.connect()
        let payload = pattern(count: 100_000, seed: 3)
        let count = 5
        for _ in 0..<count {
            try await pair.client.send(payload, toPeers: [pair.host.peer])
        }
        try await eventually { pair.hostLog.messages.count >= count }

        #expect(SharedTestMetrics.total(PeerMetrics.connectionsOpened, Self.outbound) >= openedOut + 1)
        #expect(SharedTestMetrics.total(PeerMetrics.connectionsOpened, Self.inbound) >= openedIn + 1)
        #expect(SharedTestMetrics.total(PeerMetrics.handshakesCompleted, Self.outbound) >= handshakesOut + 1)
        #expect(SharedTestMetrics.total(PeerMetrics.handshakesCompleted, Self.inbound) >= handshakesIn + 1)
        let durations = SharedTestMetrics.durations(PeerMetrics.handshakeDuration, Self.outbound)
        #expect(durations.count >= timedOut + 1)
        #expect(durations.dropFirst(timedOut).allSatisfy { $0 > 0 })
        let payloadBytes = Int64(count * payload.count)
        // Sent bytes are recorded at the flush; received ones after the read burst, which the delivery follows.
        try await eventually { SharedTestMetrics.total(PeerMetrics.bytesSent) >= bytesSent + payloadBytes }
        try await eventually { SharedTestMetrics.total(PeerMetrics.bytesReceived) >= bytesReceived + payloadBytes }
        // Each message is one DATA frame however many buffers carry it, besides the handshakes' frames.
        #expect(SharedTestMetrics.total(PeerMetrics.framesSent) >= framesSent + Int64(count))
        #expect(SharedTestMetrics.total(PeerMetrics.framesReceived) >= framesReceived + Int64(count))

        await pair.client.disconnect()
        try await eventually { Self.closed(.localDisconnect) >= closedLocally + 1 }
        try await eventually { Self.closed(.peerDisconnected) >= closedByPeer + 1 }
        await pair.host.disconnect()
        await pair.advertiser.stop()
        pair.acceptor.cancel()
    }

    @Test("a declined invitation counts as refused, by reason, on the side that declined")
    func refusedInvitation() async throws {
        let refused = [(PeerMetrics.reason, PeerMetrics.reasonName(.declined))]
        let busy = [(PeerMetrics.reason, PeerMetrics.reasonName(.busy))]
        let refusedBefore = SharedTestMetrics.total(PeerMetrics.invitationsRefused, refused)
        let busyBefore = SharedTestMetrics.total(PeerMetrics.invitationsRefused, busy)
        let advertiser = try await loopbackAdvertiser("metrics-refuser")
        let app = Task {
            var answered = 0
            for await invitation in advertiser.invitations {
                if answered == 0 { invitation.decline() } else { invitation.declineAsBusy(detail: "test") }
                answered += 1
            }
        }
        for name in ["metrics-declined", "metrics-busy"] {
            let client = Session(peer: try PeerID(displayName: name))
            await #expect(throws: InvitationError.self) {
                try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
            }
        }
        #expect(SharedTestMetrics.total(PeerMetrics.invitationsRefused, refused) >= refusedBefore + 1)
        #expect(SharedTestMetrics.total(PeerMetrics.invitationsRefused, busy) >= busyBefore + 1)
        await advertiser.stop()
        app.cancel()
    }

    @Test("each connection's log lines carry its number and, once known, the peer")
    func connectionMetadata() async throws {
        let logs = LogCapture()
        let advertiser = try await loopbackAdvertiser("metrics-logs") { $0.logger = logs.logger(label: "host") }
        let host = Session(peer: advertiser.peer)
        let acceptor = acceptAll(advertiser, into: host)
        let client = Session(peer: try PeerID(displayName: "metrics-logged"))
        try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await eventually { logs.records.contains { $0.message == "connected" } }
        let connected = try #require(logs.records.first { $0.message == "connected" })
        #expect(connected.metadata["connection"].flatMap { UInt64($0) } != nil, "\(connected.line)")
        #expect(connected.metadata["peer"]?.contains("metrics-logged") == true, "\(connected.line)")
        await client.disconnect()
        await host.disconnect()
        await advertiser.stop()
        acceptor.cancel()
    }

    @Test("a cut link that comes back counts as resumed on both sides; one that cannot, as given up on both")
    func links() async throws {
        let resumed = SharedTestMetrics.total(PeerMetrics.linksResumed)
        let resuming = try await SessionPair.connect(
            host: ReconnectionTests.configuration(),
            client: ReconnectionTests.configuration()
        )
        resuming.client.abortConnection(to: resuming.host.peer)
        try await resuming.clientLog.waitFor(resuming.host.peer, .connecting)
        try await resuming.clientLog.waitFor(resuming.host.peer, .connected)
        try await eventually { SharedTestMetrics.total(PeerMetrics.linksResumed) >= resumed + 2 }
        await resuming.client.disconnect()
        await resuming.host.disconnect()
        await resuming.advertiser.stop()
        resuming.acceptor.cancel()

        let givenUp = SharedTestMetrics.total(PeerMetrics.linksGivenUp)
        let configuration = ReconnectionTests.configuration(window: .milliseconds(500))
        let pair = try await SessionPair.connect(host: configuration, client: configuration)
        pair.client.closeMemberListener()
        pair.host.closeMemberListener()
        try await Task.sleep(for: .milliseconds(100))
        pair.client.abortConnection(to: pair.host.peer)
        _ = try await pair.clientLog.waitFor(pair.host.peer, .notConnected)
        _ = try await pair.hostLog.waitFor(pair.client.peer, .notConnected)
        try await eventually { SharedTestMetrics.total(PeerMetrics.linksGivenUp) >= givenUp + 2 }
        await pair.advertiser.stop()
        pair.acceptor.cancel()
    }

    @Test("every reason has a name of its own, from a bounded set")
    func reasonNames() {
        let reasons: [DisconnectReason] = [
            .localDisconnect, .peerDisconnected, .declined, .timedOut, .connectionLost, .livenessTimeout,
            .protocolViolation, .incompatibleVersion, .sessionFull, .unexpectedPeer, .connectionFailed,
            .handshakeTimeout, .busy, .duplicate, .encryptionRequired, .identityMismatch, .certificateRejected,
            .pairingFailed, .securityFailed, .rateLimited, .overloaded, .reconnectionFailed, .resumeRefused,
            .downgradeRefused,
        ]
        let names = reasons.map(PeerMetrics.reasonName)
        #expect(Set(names).count == reasons.count)
        #expect(Set(names).isSubset(of: PeerMetrics.reasonNames))
        #expect(PeerMetrics.reasonName(.rateLimited.with(detail: "10 invitations a second")) == "rate_limited")
    }
}
