import Foundation
import PeerConnectivity

/// An advertiser on 127.0.0.1 (no DNS-SD) whose session echoes every message, and a visitor session
/// that connects to it directly and times round trips: a real peer's view of a server under load.
final class LoopbackEcho: Sendable {
    /// The advertiser being measured (or attacked).
    let advertiser: Advertiser
    private let host: Session
    private let visitor: Session
    private let hostTask: Task<Void, Never>

    /// Starts the advertiser and its echoing session.
    ///
    /// - Parameter configure: changes to the advertiser's configuration (127.0.0.1, no DNS-SD, set first).
    /// - Throws: when the advertiser cannot start.
    init(configure: (inout Advertiser.Configuration) -> Void = { _ in }) async throws {
        var configuration = Advertiser.Configuration.default
        configuration.host = "127.0.0.1"
        configuration.publishesService = false
        configure(&configuration)
        let peer = try PeerID(displayName: "echo-host")
        let advertiser = try Advertiser(peer: peer, serviceType: "echo", configuration: configuration)
        try await advertiser.start()
        let host = Session(peer: peer, configuration: Self.sessionConfiguration)
        self.advertiser = advertiser
        self.host = host
        self.visitor = Session(peer: try PeerID(displayName: "echo-visitor"), configuration: Self.sessionConfiguration)
        hostTask = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await invitation in advertiser.invitations {
                        try? await invitation.accept(into: host)
                    }
                }
                group.addTask {
                    for await event in host.events {
                        guard case .dataReceived(let data, let from, _) = event else { continue }
                        try? await host.send(data, toPeers: [from])
                    }
                }
            }
        }
    }

    /// Sessions without the mesh: a newcomer that joins and leaves must not make the visitor dial it.
    private static var sessionConfiguration: Session.Configuration {
        var configuration = Session.Configuration.patient
        configuration.joinsMesh = false
        return configuration
    }

    /// The advertiser's port.
    var port: Int { advertiser.port ?? 0 }

    /// The visitor connects to the advertiser (an ordinary invitation from 127.0.0.1).
    ///
    /// - Parameter timeout: how long the invitation may take.
    /// - Returns: the time it took, from dialing to connected.
    /// - Throws: when the invitation fails.
    func connect(timeout: Duration = .seconds(5)) async throws -> Duration {
        let start = ContinuousClock.now
        _ = try await visitor.connectPeer(host: "127.0.0.1", port: port, timeout: timeout)
        return start.duration(to: .now)
    }

    /// Another peer connects, then leaves: how long a newcomer takes to get in (under load, say).
    ///
    /// - Parameter timeout: how long the invitation may take.
    /// - Returns: the time from dialing to connected.
    /// - Throws: when the invitation fails.
    func connectNewcomer(timeout: Duration = .seconds(5)) async throws -> Duration {
        let newcomer = Session(peer: try PeerID(displayName: "echo-newcomer"), configuration: Self.sessionConfiguration)
        let start = ContinuousClock.now
        _ = try await newcomer.connectPeer(host: "127.0.0.1", port: port, timeout: timeout)
        let elapsed = start.duration(to: .now)
        await newcomer.disconnect()
        return elapsed
    }

    /// Sends `count` messages of `size` bytes one after the other, each after the echo of the last and
    /// a pause of `gap` (paced round trips wake idle threads each time, as an application's do).
    ///
    /// - Parameters:
    ///   - count: how many round trips.
    ///   - size: bytes per message.
    ///   - gap: the pause after each echo.
    /// - Returns: each round trip, in nanoseconds.
    /// - Throws: ``FixtureError`` when an echo differs or the peer leaves.
    func roundTrips(count: Int, size: Int = 64, gap: Duration = .zero) async throws -> [UInt64] {
        var events = visitor.events.makeAsyncIterator()
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            var message = Data(repeating: 0x45, count: size)
            withUnsafeBytes(of: UInt32(index).bigEndian) { message.replaceSubrange(0..<4, with: $0) }
            let start = DispatchTime.now().uptimeNanoseconds
            try await visitor.send(message, toPeers: [advertiser.peer])
            guard try await Self.nextData(&events, from: advertiser.peer) == message else {
                throw FixtureError("echo \(index) differs")
            }
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
            if gap > .zero { try await Task.sleep(for: gap) }
        }
        return samples
    }

    private static func nextData(_ events: inout Session.Events.Iterator, from host: PeerID) async throws -> Data {
        while let event = await events.next() {
            switch event {
            case .dataReceived(let data, _, _): return data
            case .peerStateChanged(host, .notConnected, let reason):
                throw FixtureError("disconnected: \(String(describing: reason))")
            case .peerStateChanged, .streamReceived, .startedReceivingResource, .finishedReceivingResource: continue
            }
        }
        throw FixtureError("session ended")
    }

    /// Disconnects both sessions and stops the advertiser.
    func stop() async {
        await visitor.disconnect()
        await host.disconnect()
        await advertiser.stop()
        hostTask.cancel()
    }
}
