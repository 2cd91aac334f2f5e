import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// `Session.linkReport(for:)`: the kernel's view of a peer's TCP connection, over real loopback sockets.
@Suite("Link reports", .timeLimit(.minutes(1 * slowdown)))
struct LinkReportTests {
    @Test(
        "a connected peer's report counts the bytes that crossed, with a round trip and a window; none without a peer",
        .enabled(if: isLinux)
    )
    func report() async throws {
        let pair = try await SessionPair.connect(encryption: .none)
        let peer = pair.host.peer
        let before = try #require(await pair.client.linkReport(for: peer))
        let message = Data(repeating: 7, count: 1 << 20)
        for _ in 0..<4 { try await pair.client.send(message, toPeers: [peer]) }
        try await eventually { pair.hostLog.messages.count >= 4 }
        let after = try #require(await pair.client.linkReport(for: peer))
        // The 4 MiB and their frames went out on this connection; the kernel counted them.
        #expect(after.bytesSent >= before.bytesSent + 4 << 20, "\(before) \(after)")
        #expect(after.bytesRetransmitted <= after.bytesSent)
        #expect(after.smoothedRoundTrip > .zero && after.segmentSize > 0 && after.congestionWindowSegments > 0)
        #expect(after.minimumRoundTrip.map { $0 <= after.smoothedRoundTrip + after.roundTripVariation } ?? true)
        let received = try #require(await pair.host.linkReport(for: pair.client.peer))
        #expect(received.bytesReceived >= 4 << 20, "\(received)")
        let stranger = try PeerID(displayName: "stranger")
        #expect(await pair.client.linkReport(for: stranger) == nil)
        await pair.client.disconnect()
        await pair.host.disconnect()
        await pair.advertiser.stop()
    }

    @Test(
        "each side runs the congestion control its configuration names, the dialled and the accepted connection",
        .enabled(if: isLinux)
    )
    func congestionControl() async throws {
        // Both sides ask for another one than the system's default, so that the read-back proves the setting.
        let system = try systemCongestionControl()
        let asked = system == "reno" ? "cubic" : "reno"
        var configuration = Session.Configuration.patient
        configuration.congestionControl = asked
        let pair = try await SessionPair.connect(host: configuration, client: configuration, encryption: .none)
        #expect(await pair.client.linkReport(for: pair.host.peer)?.congestionControl == asked)
        #expect(await pair.host.linkReport(for: pair.client.peer)?.congestionControl == asked)
        await pair.client.disconnect()
        await pair.host.disconnect()
        await pair.advertiser.stop()
    }

    @Test(
        "a congestion control the kernel does not offer leaves the system's running, and the link works",
        .enabled(if: isLinux)
    )
    func unknownCongestionControl() async throws {
        let system = try systemCongestionControl()
        var configuration = Session.Configuration.patient
        configuration.congestionControl = "nosuch"
        let pair = try await SessionPair.connect(client: configuration, encryption: .none)
        try await pair.client.send(Data("after".utf8), toPeers: [pair.host.peer])
        try await eventually { pair.hostLog.messages.count == 1 }
        #expect(await pair.client.linkReport(for: pair.host.peer)?.congestionControl == system)
        await pair.client.disconnect()
        await pair.host.disconnect()
        await pair.advertiser.stop()
    }
}

/// The congestion control new connections get on this host.
private func systemCongestionControl() throws -> String {
    try String(contentsOfFile: "/proc/sys/net/ipv4/tcp_congestion_control", encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Whether this is Linux, where `TCP_INFO` is read.
private let isLinux: Bool = {
    #if os(Linux)
        true
    #else
        false
    #endif
}()
