import Foundation
import NIOCore
import NIOPosix
import PeerConnectivity
import PeerConnectivityNIO
import Testing

/// An app that runs SwiftNIO passes its own event loop group: the peers' I/O runs there.
@Suite("An app's event loop group", .timeLimit(.minutes(1 * slowdown)))
struct EventLoopGroupTests {
    @Test("a session and an advertiser given a group run on it, connect and echo; without one they do not")
    func ownGroup() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The group must outlive the sessions and the advertiser: they are gone when `exercise` returns.
        try await exercise(group)
        try await group.shutdownGracefully()
    }

    private func exercise(_ group: MultiThreadedEventLoopGroup) async throws {
        let loop = group.next()
        var hostConfiguration = Session.Configuration.patient
        hostConfiguration.eventLoopGroup = group
        let advertiser = try await loopbackAdvertiser("group-host") { $0.eventLoopGroup = group }
        let host = Session(peer: advertiser.peer, configuration: hostConfiguration)
        let hostLog = EventLog(host)
        let acceptor = acceptAll(advertiser, into: host)
        var clientConfiguration = Session.Configuration.patient
        clientConfiguration.eventLoopGroup = group
        let client = Session(peer: try PeerID(displayName: "group-client"), configuration: clientConfiguration)
        let elsewhere = Session(peer: try PeerID(displayName: "shared-group"))

        #expect(await Task(executorPreference: host.taskExecutor) { loop.inEventLoop }.value)
        #expect(await Task(executorPreference: client.taskExecutor) { loop.inEventLoop }.value)
        #expect(await !Task(executorPreference: elsewhere.taskExecutor) { loop.inEventLoop }.value)

        var events = client.events.makeAsyncIterator()
        let hostPeer = try await client.connectPeer(
            host: "127.0.0.1",
            port: advertiser.port!,
            timeout: invitationTimeout
        )
        try await hostLog.waitFor(client.peer, .connected)
        let echo = Task(executorPreference: host.taskExecutor) {
            for await case .dataReceived(let data, let peer, _) in host.events {
                // The echo says whether it runs on the app's loop (it should: no hop).
                try? await host.send(Data([loop.inEventLoop ? 1 : 0]) + data, toPeers: [peer])
            }
        }
        let message = Data("on the app's own loop".utf8)
        try await client.send(message, toPeers: [hostPeer])
        var echoed: Data?
        while let event = await events.next() {
            if case .dataReceived(let data, _, _) = event {
                echoed = data
                break
            }
        }
        #expect(echoed == Data([1]) + message)

        echo.cancel()
        acceptor.cancel()
        await client.disconnect()
        await host.disconnect()
        await advertiser.stop()
    }
}
