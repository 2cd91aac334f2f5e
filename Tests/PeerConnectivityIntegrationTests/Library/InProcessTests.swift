import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// `Session.connectInProcess(to:)`: two sessions of one process joined over a socket pair, with the
/// library's whole protocol and no address, no port, no DNS-SD. The time limit guards against a hang; it is no
/// speed bound.
@Suite("Sessions joined in the process", .timeLimit(.minutes(5 * slowdown)))
struct InProcessTests {
    @Test("both see each other connected; messages, a stream and a resource cross; a disconnect is seen")
    func wholeProtocol() async throws {
        let scratch = try ScratchDirectory("in-process")
        defer { scratch.remove() }
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = scratch.url.appendingPathComponent("received", isDirectory: true)
        let alice = Session(peer: try PeerID(displayName: "alice"))
        let bob = Session(peer: try PeerID(displayName: "bob"), configuration: configuration)
        let aliceLog = EventLog(alice)
        let bobLog = EventLog(bob)

        try await alice.connectInProcess(to: bob, context: Data("hello".utf8), timeout: invitationTimeout)
        #expect(alice.state(of: bob.peer) == .connected)
        #expect(bob.state(of: alice.peer) == .connected)
        // Encrypted by default, as over TCP: the local sockets carry TLS 1.3 too.
        #expect(alice.securityInfo(for: bob.peer)?.isEncrypted == true)
        #expect(bob.endpoints(of: alice.peer) == nil, "no address: a socket pair, not a network")

        try await alice.send(Data("to bob".utf8), toPeers: [bob.peer])
        try await bob.send(Data("to alice".utf8), toPeers: [alice.peer])
        _ = try await eventually {
            bobLog.messages == [Data("to bob".utf8)] && aliceLog.messages == [Data("to alice".utf8)]
        }

        // No address to send datagrams to: unreliable messages go over the link itself.
        try await alice.send(Data("datagram".utf8), toPeers: [bob.peer], mode: .unreliable)
        _ = try await eventually { bobLog.messages.contains(Data("datagram".utf8)) }

        let stream = try alice.startStream(withName: "numbers", toPeer: bob.peer)
        let streamed = pattern(count: 300_000, seed: 3)
        try await stream.write(streamed)
        try stream.finish()
        let incoming = try #require(try await bobLog.waitForStreams(1).first)
        var received = Data()
        for try await chunk in incoming { received.append(chunk) }
        #expect(received == streamed)

        let file = scratch.url.appendingPathComponent("source.bin")
        let content = pattern(count: 3 << 20, seed: 5)
        try content.write(to: file)
        try await alice.sendResource(at: file, withName: "photo.jpg", toPeer: bob.peer).wait()
        let placed = try #require(try await bobLog.waitForResources(1).first?.result.get())
        #expect(try Data(contentsOf: placed) == content)

        await alice.disconnect()
        try await bobLog.waitFor(alice.peer, .notConnected)
    }

    @Test("an empty message, a short one, and ones either side of the size the reader copies arrive whole")
    func messageSizesArriveWhole() async throws {
        let alice = Session(peer: try PeerID(displayName: "alice"))
        let bob = Session(peer: try PeerID(displayName: "bob"), configuration: .patient)
        let bobLog = EventLog(bob)
        try await alice.connectInProcess(to: bob, context: Data(), timeout: invitationTimeout)
        // 256 KiB is the largest message the reader copies out of the read; larger ones share its buffer.
        let sent = [0, 3, 256 << 10, (256 << 10) + 1].enumerated().map { pattern(count: $1, seed: UInt64($0)) }
        for message in sent {
            try await alice.send(message, toPeers: [bob.peer])
        }
        _ = try await eventually { bobLog.messages.count == sent.count }
        #expect(bobLog.messages == sent)
        await alice.disconnect()
    }

    @Test("a session that already holds the peer refuses a second join with alreadyInSession")
    func secondJoinRefused() async throws {
        let alice = Session(peer: try PeerID(displayName: "alice"))
        let bob = Session(peer: try PeerID(displayName: "bob"))
        try await alice.connectInProcess(to: bob, timeout: invitationTimeout)
        await #expect(throws: SessionError.alreadyInSession(bob.peer)) {
            try await alice.connectInProcess(to: bob, timeout: invitationTimeout)
        }
        #expect(alice.state(of: bob.peer) == .connected, "the first link stands")
    }

    @Test("a session that requires encryption does not join one that refuses it; the inviter is told why")
    func encryptionMismatch() async throws {
        let alice = Session(peer: try PeerID(displayName: "alice"), encryptionPreference: .required)
        let bob = Session(peer: try PeerID(displayName: "bob"), encryptionPreference: .none)
        let failure = await #expect(throws: InvitationError.self) {
            try await alice.connectInProcess(to: bob, timeout: invitationTimeout)
        }
        #expect(failure?.reason == .encryptionRequired, "\(String(describing: failure))")
        #expect(alice.state(of: bob.peer) == .notConnected)
        #expect(bob.state(of: alice.peer) == .notConnected)
    }
}
