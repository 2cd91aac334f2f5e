import Foundation
import Observation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// The observable model, fed by real sessions on loopback (and the real avahi-daemon for discovery).
@Suite("SessionModel", .avahiTimeLimit)
@MainActor
struct SessionModelTests {
    @Test("peers: connected, then notConnected with the reason; each change is signalled through Observation")
    func peerStates() async throws {
        let advertiser = try await loopbackAdvertiser("model-host")
        let host = Session(peer: advertiser.peer)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        let client = Session(peer: try PeerID(displayName: "model-client"))
        let model = SessionModel(session: client)
        #expect(model.peers.isEmpty && !model.isRunning)
        let running = Task { await model.run() }
        defer { running.cancel() }
        try await eventually { model.isRunning }

        let joined = observeChange { _ = model.connectedPeers }
        let peer = try await client.connectPeer(host: "127.0.0.1", port: advertiser.port!, timeout: invitationTimeout)
        try await eventually { model.peers[peer]?.state == .connected }
        #expect(joined.value, "Observation signalled the change of connectedPeers")
        #expect(model.connectedPeers == [peer])
        let status = try #require(model.peers[peer])
        #expect(status.state == .connected && status.disconnectReason == nil)
        #expect(status.security?.isEncrypted == true, "the model shows the link encrypted, as by default")
        #expect(status.security?.tlsVersion == "TLS 1.3")

        let left = observeChange { _ = model.peers }
        await host.disconnect()
        try await eventually { model.peers[peer]?.state == .notConnected }
        #expect(left.value, "Observation signalled the change of peers")
        #expect(model.peers[peer]?.disconnectReason == .peerDisconnected)
        #expect(model.peers[peer]?.security == nil, "no link, nothing to show of its security")
        #expect(model.connectedPeers.isEmpty)
    }

    @Test("a model made late shows the session as it is; paused, it keeps still; run again, it catches up")
    func snapshotAndPause() async throws {
        let pair = try await SessionPair.connect()
        let hostPeer = pair.advertiser.peer
        let model = SessionModel(session: pair.client)
        #expect(model.connectedPeers == [hostPeer], "shown from the session's state before run()")

        let first = Task { await model.run() }
        try await eventually { model.isRunning }
        first.cancel()
        await first.value
        #expect(!model.isRunning)

        let changed = observeChange { _ = model.peers }
        await pair.host.disconnect()
        try await pair.clientLog.waitFor(hostPeer, .notConnected)
        #expect(model.connectedPeers == [hostPeer], "no change while not running")
        #expect(!changed.value)

        let second = Task { await model.run() }
        defer { second.cancel() }
        try await eventually { model.peers[hostPeer]?.state == .notConnected }
        #expect(changed.value)
        #expect(model.peers[hostPeer]?.disconnectReason == nil, "the reason was not seen: left unknown")
    }

    @Test("two views run one model: it follows while either runs, and stops when both are gone")
    func twoRunners() async throws {
        let pair = try await SessionPair.connect()
        let hostPeer = pair.advertiser.peer
        let model = SessionModel(session: pair.client)
        let list = Task { await model.run() }
        let detail = Task { await model.run() }
        try await eventually { model.isRunning }
        list.cancel()
        await list.value
        #expect(model.isRunning, "the detail view still runs it")
        await pair.host.disconnect()
        try await eventually { model.peers[hostPeer]?.state == .notConnected }
        #expect(model.peers[hostPeer]?.disconnectReason == .peerDisconnected)
        detail.cancel()
        await detail.value
        #expect(!model.isRunning)
    }

    @Test("transfers: in flight both ways, with their progress; cancelling one from the model ends it on both sides")
    func transfers() async throws {
        let scratch = try ScratchDirectory("model-transfers")
        defer { scratch.remove() }
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = scratch.url.appendingPathComponent("in")
        let pair = try await SessionPair.connect(host: configuration)
        let hostPeer = pair.advertiser.peer
        let sender = SessionModel(session: pair.client)
        let receiver = SessionModel(session: pair.host)
        let running = [Task { await sender.run() }, Task { await receiver.run() }]
        defer { running.forEach { $0.cancel() } }
        try await eventually { sender.isRunning && receiver.isRunning }

        // A small file: it comes and goes, and the change is signalled.
        let small = scratch.url.appendingPathComponent("small.txt")
        try Data("hello".utf8).write(to: small)
        let sent = observeChange { _ = sender.transfers }
        let transfer = try pair.client.sendResource(at: small, withName: "small.txt", toPeer: hostPeer)
        try await transfer.wait()
        #expect(sent.value)
        try await eventually { sender.transfers.isEmpty && receiver.transfers.isEmpty }

        // A large one, caught in flight, then cancelled through the receiver's model.
        let large = try await scratch.largeFile(mebibytes: 128)
        let big = try pair.client.sendResource(at: large, withName: "large.bin", toPeer: hostPeer)
        try await eventually { !sender.transfers.isEmpty && !receiver.transfers.isEmpty }
        let outgoing = try #require(sender.transfers.values.first)
        #expect(outgoing.direction == .outgoing && outgoing.name == "large.bin" && outgoing.peer == hostPeer)
        #expect(outgoing.progress === big.progress)
        let incoming = try #require(receiver.transfers.values.first)
        #expect(incoming.direction == .incoming && incoming.name == "large.bin")
        #expect(incoming.peer == pair.client.peer)
        #expect(incoming.progress.totalUnitCount == 128 << 20)
        incoming.progress.cancel()
        await #expect(throws: TransferError.self) { try await big.wait() }
        try await eventually { sender.transfers.isEmpty && receiver.transfers.isEmpty }
    }

    @Test("discovered follows the browser: found with discoveryInfo, lost, and empty once it stops", .avahi)
    func discovered() async throws {
        let service = uniqueServiceType("model")
        let me = try PeerID(displayName: "model-browser")
        let other = try Advertiser(
            peer: try PeerID(displayName: "found"),
            discoveryInfo: ["room": "blue"],
            serviceType: service
        )
        let browser = try Browser(peer: me, serviceType: service)
        let model = SessionModel(session: Session(peer: me), browser: browser)
        let running = Task { await model.run() }
        defer { running.cancel() }
        try await eventually { model.isRunning }
        let found = observeChange { _ = model.discovered }
        try await other.start()
        try browser.start()
        try await eventually { model.discovered[other.peer] == ["room": "blue"] }
        #expect(found.value)
        #expect(model.discovered.count == 1)

        // A second model made now starts from what the browser has found.
        let late = SessionModel(session: Session(peer: me), browser: browser)
        #expect(late.discovered == [other.peer: ["room": "blue"]])

        await other.stop()
        try await eventually { model.discovered.isEmpty }
        browser.stop()
        #expect(model.discoveryError == nil)
    }

    @Test("a model takes no messages: not running, it never holds back the session's reading")
    func noBackpressure() async throws {
        var configuration = Session.Configuration.patient
        configuration.receiveBufferLimit = 1 << 20
        let pair = try await SessionPair.connect(host: configuration)
        let model = SessionModel(session: pair.host)  // subscribed to nothing until run()
        let running = Task { await model.run() }
        try await eventually { model.isRunning }
        let hostPeer = pair.advertiser.peer
        // The host's EventLog reads everything; the model, running or not, must not stall the sender.
        for _ in 0..<128 {  // 8 MiB: eight times the limit
            try await pair.client.send(Data(count: 64 << 10), toPeers: [hostPeer])
        }
        running.cancel()
        await running.value
        for _ in 0..<128 {
            try await pair.client.send(Data(count: 64 << 10), toPeers: [hostPeer])
        }
        try await eventually { pair.hostLog.messages.count == 256 }
        _ = model
    }
}
