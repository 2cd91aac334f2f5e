import Foundation
import PeerConnectivity

/// The accepting side of the benchmarks: an advertiser on 127.0.0.1 without DNS-SD and the session it
/// accepts every invitation into. That session echoes, counts or answers each message by its first byte
/// (the protocol of core-bench's in-process reflector), on its own event loop as a low-latency app does.
final class EchoHost: Sendable {
    /// First byte of a message to send back as it came.
    static let echo: UInt8 = 0x45
    /// First byte of a message to count only.
    static let count: UInt8 = 0x54
    /// First byte of the request for the count: the answer is `done` and the count as 8 bytes big-endian.
    static let done: UInt8 = 0x44

    /// The listener that invitations reach.
    let advertiser: Advertiser
    /// The session every invitation is accepted into.
    let session: Session
    private let task: Task<Void, Never>

    /// Starts listening on an ephemeral port of 127.0.0.1.
    ///
    /// - Parameters:
    ///   - encryption: the advertiser's and the session's preference.
    ///   - reconnection: the session keeps reliable messages until acknowledged (reconnection on).
    /// - Throws: `DiscoveryError` when the listener cannot start.
    init(encryption: EncryptionPreference, reconnection: Bool = false) async throws {
        var configuration = Advertiser.Configuration.default
        configuration.host = "127.0.0.1"
        configuration.publishesService = false
        // The connect benchmarks dial back to back from 127.0.0.1, well above the flood limits.
        configuration.invitationBurstPerAddress = 100_000
        configuration.invitationsPerSecondPerAddress = 100_000
        let peer = try PeerID(displayName: "bench-host")
        advertiser = try Advertiser(
            peer: peer,
            serviceType: "pc-micro",
            encryptionPreference: encryption,
            configuration: configuration
        )
        var sessionConfiguration = Session.Configuration.default
        sessionConfiguration.joinsMesh = false
        if reconnection { sessionConfiguration.reconnection = .default }
        session = Session(peer: peer, encryptionPreference: encryption, configuration: sessionConfiguration)
        try await advertiser.start()
        let (advertiser, session) = (self.advertiser, self.session)
        task = Task(executorPreference: session.taskExecutor) {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await invitation in advertiser.invitations {
                        try? await invitation.accept(into: session)
                    }
                }
                group.addTask { await Self.serve(session) }
            }
        }
    }

    /// The advertiser's port, to dial.
    var port: Int { advertiser.port ?? 0 }

    /// Echoes, counts and answers messages until the session ends.
    private static func serve(_ session: Session) async {
        var counted: UInt64 = 0
        for await event in session.events {
            guard case .dataReceived(let data, let from, _) = event, let kind = data.first else { continue }
            switch kind {
            case echo:
                try? await session.send(data, toPeers: [from])
            case done:
                var reply = Data([done])
                withUnsafeBytes(of: counted.bigEndian) { reply.append(contentsOf: $0) }
                counted = 0
                try? await session.send(reply, toPeers: [from])
            default:
                counted += 1
            }
        }
    }

    /// Waits until no peer is left in the session (a client that disconnected has been seen to go).
    ///
    /// - Parameter timeout: how long to wait at most.
    func waitUntilEmpty(timeout: Duration = .seconds(2)) async {
        let deadline = ContinuousClock.now + timeout
        while !session.connectedPeers.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Stops listening and leaves the session.
    func stop() async {
        await advertiser.stop()
        await session.disconnect()
        task.cancel()
    }
}
