import Foundation
import PeerConnectivityCore
import Testing

@testable import PeerConnectivity

/// MEMBERS makes a session dial the addresses it names: who may send it, and how much it may ask.
@Suite("Mesh introductions from a hostile member", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct IntroductionTests {
    /// A member id that sorts after every random one, so that the session is the side that dials it.
    static func lateID(_ index: UInt8) -> UUID {
        UUID(uuidString: String(format: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFF%02X", index))!
    }

    /// MEMBERS naming `count` members at 127.0.0.1:`port`.
    static func members(_ count: Int, port: Int) -> [Frame.Member] {
        (0..<count).map { index in
            Frame.Member(
                peer: try! PeerID(id: lateID(UInt8(index)), displayName: "member-\(index)"),
                address: [127, 0, 0, 1],
                port: UInt16(port)
            )
        }
    }

    @Test("MEMBERS over a plain connection makes no connection to the address it names; the sender stays")
    func plainIntroductionIgnored() async throws {
        let target = try await ConnectionCounter.start()
        defer { Task { await target.stop() } }
        let logs = LogCapture()
        let advertiser = try await loopbackAdvertiser("introduced-to", encryption: .none)
        var configuration = Session.Configuration.patient
        configuration.logger = logs.logger(label: "host")
        // The raw socket answers no keepalive: the 5 s default, counted from its last frame, ran out on a loaded
        // machine before the checks below.
        configuration.livenessTimeout = .seconds(60)
        let host = Session(peer: advertiser.peer, encryptionPreference: .none, configuration: configuration)
        let acceptor = acceptAll(advertiser, into: host)
        defer { acceptor.cancel() }
        let socket = try await RawSocket(port: advertiser.port!)
        let mallory = UUID()
        socket.send(HandFrames.hello(name: "mallory", id: mallory) + HandFrames.invite())
        #expect(await socket.readFrame(ofType: 0x03) != nil, "accepted")
        var body: [UInt8] = [1]
        body += withUnsafeBytes(of: Self.lateID(1).uuid) { Array($0) } + [6] + Array("victim".utf8)
        body += [4, 127, 0, 0, 1] + HandFrames.bigEndian(UInt16(target.port))
        socket.send(HandFrames.frame(type: 0x15, body: body))
        try await Task.sleep(for: .milliseconds(1500))
        #expect(target.count == 0, "the session dialed the address an unauthenticated peer named")
        #expect(host.connectedPeers.map(\.id) == [mallory], "the sender's session goes on")
        try await eventually {
            logs.records.contains { $0.level == .warning && $0.message.contains("ignoring MEMBERS") }
        }
    }

    @Test("an encrypted member's introductions dial at most 4 at once")
    func introductionsBounded() async throws {
        let silent = try await ConnectionCounter.start()
        defer { Task { await silent.stop() } }
        let pair = try await SessionPair.connect()
        defer { pair.acceptor.cancel() }
        // Twenty members behind an address that accepts and never answers: the dials wait.
        try pair.client.runtime.connection(to: pair.host.peer).sendControl(
            .members(Self.members(20, port: silent.port))
        )
        // The dials start (later under ThreadSanitizer than 1.5 s), then 1.5 s for more than 4 to pile up.
        try await eventually { silent.count >= 1 }
        try await Task.sleep(for: .milliseconds(1500) * slowdown)
        #expect(silent.count <= 4, "\(silent.count) dials at once for one introducer")
        #expect(pair.host.state(of: pair.client.peer) == .connected)
    }

    @Test("introductions whose dials fail leave the introducer connected")
    func failedIntroductionsEndNothing() async throws {
        let refusing = try await ConnectionCounter.start(closesAtOnce: true)
        defer { Task { await refusing.stop() } }
        let pair = try await SessionPair.connect()
        defer { pair.acceptor.cancel() }
        try pair.client.runtime.connection(to: pair.host.peer).sendControl(
            .members(Self.members(3, port: refusing.port))
        )
        try await eventually { refusing.count >= 3 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(pair.host.state(of: pair.client.peer) == .connected, "a failed introduction ends no session")
        #expect(pair.client.state(of: pair.host.peer) == .connected)
        #expect(pair.host.connectedPeers == [pair.client.peer])
    }
}
