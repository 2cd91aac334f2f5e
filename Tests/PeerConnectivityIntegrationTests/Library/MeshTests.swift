import Foundation
import PeerConnectivity
import Testing

/// Full mesh over loopback sockets: peers accepted into one session connect to every member.
///
/// The time limit has room for the mesh of 16 (120 TLS connections) on a machine busy with the suite in parallel.
@Suite("Full mesh", .timeLimit(.minutes(3 * slowdown)))
struct MeshTests {
    /// Waits until every session holds every other as connected.
    private func waitForMesh(_ sessions: [Session], timeout: Duration = waitLimit) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let complete = sessions.allSatisfy { session in
                Set(session.connectedPeers) == Set(sessions.map(\.peer)).subtracting([session.peer])
            }
            if complete { return true }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test(
        "peers that join one host's session end connected to each other (16: maximumPeers raised); a send to all reaches all",
        arguments: [3, 6, 16]
    )
    func mesh(size: Int) async throws {
        var configuration = Session.Configuration.patient
        configuration.maximumPeers = max(8, size - 1)
        let advertiser = try await loopbackAdvertiser("mesh-host")
        let host = Session(peer: advertiser.peer, configuration: configuration)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        var sessions = [host]
        var logs = [EventLog(host)]
        for index in 1..<size {
            let session = Session(peer: try PeerID(displayName: "member-\(index)"), configuration: configuration)
            logs.append(EventLog(session))
            try await session.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
            sessions.append(session)
        }
        let complete = try await waitForMesh(sessions)
        #expect(complete, "\(sessions.map { "\($0.peer.displayName): \($0.connectedPeers.map(\.displayName))" })")
        // A broadcast from the last member reaches every other member exactly once.
        let sender = sessions[size - 1]
        try await sender.send(Data("to all".utf8), toPeers: sender.connectedPeers)
        // Each receives it (seconds, on a loaded machine), then no second copy follows.
        try await eventually { zip(sessions, logs).allSatisfy { $0 === sender || !$1.messages.isEmpty } }
        try await Task.sleep(for: .milliseconds(300))
        for (session, log) in zip(sessions, logs) where session !== sender {
            #expect(log.messages == [Data("to all".utf8)], "\(session.peer.displayName)")
        }
        for session in sessions { await session.disconnect() }
    }

    @Test("with joinsMesh off, peers of one host stay unknown to each other")
    func meshOff() async throws {
        var configuration = Session.Configuration.patient
        configuration.joinsMesh = false
        let advertiser = try await loopbackAdvertiser("star-host")
        let host = Session(peer: advertiser.peer, configuration: configuration)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        let one = Session(peer: try PeerID(displayName: "one"), configuration: configuration)
        let two = Session(peer: try PeerID(displayName: "two"), configuration: configuration)
        try await one.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await two.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await Task.sleep(for: .milliseconds(500))
        #expect(one.connectedPeers == [host.peer])
        #expect(two.connectedPeers == [host.peer])
        #expect(Set(host.connectedPeers) == [one.peer, two.peer])
    }
}
