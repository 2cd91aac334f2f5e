import BenchSupport
import Foundation
import PeerConnectivity

/// The same measurements as ``RawTCP``, through PeerConnectivity: an advertiser whose session
/// echoes, and a browser-side session that invites it. One process, loopback, real avahi-daemon.
final class PeerBench: Sendable {
    static let echo: UInt8 = 0x45  // 'E': send this message back
    static let bulk: UInt8 = 0x54  // 'T': count it
    static let done: UInt8 = 0x44  // 'D': answer with how many 'T' messages arrived

    let advertiser: Advertiser
    let server: Session
    let serverTask: Task<Void, Never>
    let serviceType: String
    let configuration: Session.Configuration
    let encryption: EncryptionPreference

    init(serviceType: String, configuration: Session.Configuration = .default, encryption: EncryptionPreference)
        async throws
    {
        let peer = try PeerID(displayName: "bench-reflector")
        self.serviceType = serviceType
        self.configuration = configuration
        self.encryption = encryption
        server = Session(peer: peer, encryptionPreference: encryption, configuration: configuration)
        advertiser = try Advertiser(peer: peer, serviceType: serviceType, encryptionPreference: encryption)
        try await advertiser.start()
        let (advertiser, server) = (self.advertiser, self.server)
        // The reflector's side runs on its session's event loop, as an app that wants the lowest latency does.
        serverTask = Task(executorPreference: server.taskExecutor) {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await invitation in advertiser.invitations {
                        try? await invitation.accept(into: server)
                    }
                }
                group.addTask {
                    var counted = 0
                    for await event in server.events {
                        guard case .dataReceived(let data, let from, _) = event, let kind = data.first else { continue }
                        switch kind {
                        case Self.echo:
                            try? await server.send(data, toPeers: [from])
                        case Self.done:
                            var reply = Data([Self.done])
                            withUnsafeBytes(of: UInt64(counted).bigEndian) { reply.append(contentsOf: $0) }
                            counted = 0
                            try? await server.send(reply, toPeers: [from])
                        default:
                            counted += 1
                        }
                    }
                }
            }
        }
    }

    /// Browser start to connected, with the advertiser already up; a new browser and session each time.
    func connectTime() async throws -> (milliseconds: Double, session: Session, peer: PeerID) {
        let me = try PeerID(displayName: "bench-runner")
        let session = Session(peer: me, encryptionPreference: encryption, configuration: configuration)
        let start = ContinuousClock.now
        let browser = try Browser(peer: me, serviceType: serviceType)
        try browser.start()
        var found: PeerID?
        for try await event in browser.events {
            if case .found(let peer, _) = event {
                found = peer
                break
            }
        }
        guard let found else { throw BenchError("the reflector was not found") }
        try await browser.invitePeer(found, to: session, timeout: .seconds(10))
        let elapsed = start.duration(to: .now)
        browser.stop()
        return (elapsed.milliseconds, session, found)
    }

    /// Round trips of `size`-byte messages in nanoseconds, after `warmup` unmeasured ones.
    func roundTrips(session: Session, peer: PeerID, size: Int, count: Int, warmup: Int) async throws -> [UInt64] {
        var message = Data(repeating: 0x42, count: size)
        message[0] = Self.echo
        var events = session.events.makeAsyncIterator()
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for index in 0..<(warmup + count) {
            let start = DispatchTime.now().uptimeNanoseconds
            try await session.send(message, toPeers: [peer])
            guard try await nextData(&events) == message else { throw BenchError("echo \(index) differs") }
            if index >= warmup { samples.append(DispatchTime.now().uptimeNanoseconds - start) }
        }
        return samples
    }

    /// Seconds to send `count` messages of `size` bytes one way, until the reflector confirms them all.
    func oneWay(session: Session, peer: PeerID, size: Int, count: Int) async throws -> Double {
        var message = Data(repeating: 0x42, count: size)
        message[0] = Self.bulk
        var events = session.events.makeAsyncIterator()
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count {
            try await session.send(message, toPeers: [peer])
        }
        try await session.send(Data([Self.done]), toPeers: [peer])
        let reply = try await nextData(&events)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let counted = reply.dropFirst().reduce(0) { $0 << 8 | Int($1) }
        guard counted == count else { throw BenchError("reflector counted \(counted) of \(count) messages") }
        return seconds
    }

    private func nextData(_ events: inout Session.Events.Iterator) async throws -> Data {
        while let event = await events.next() {
            switch event {
            case .dataReceived(let data, _, _): return data
            case .peerStateChanged(_, .notConnected, let reason):
                throw BenchError("disconnected: \(String(describing: reason))")
            case .peerStateChanged, .streamReceived, .startedReceivingResource, .finishedReceivingResource: continue
            }
        }
        throw BenchError("session ended")
    }

    func stop() async {
        await advertiser.stop()
        await server.disconnect()
        serverTask.cancel()
    }
}
