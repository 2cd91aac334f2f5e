import BenchmarkSupport
import Foundation
import PeerConnectivity

/// An ``EchoHost`` and a client session connected to it directly over loopback (no DNS-SD), with
/// the client's event iterator kept across iterations so that measuring makes no new subscriber.
final class LoopbackPair {
    /// The accepting side.
    let host: EchoHost
    /// The dialing side, whose sends are measured.
    let client: Session
    /// The host's peer, as the client knows it.
    let peer: PeerID
    private var events: Session.Events.Iterator

    /// Starts a host and connects a client to it.
    ///
    /// - Parameters:
    ///   - encryption: both sides' preference (`.none` for plain TCP, `.required` for TLS 1.3).
    ///   - reconnection: both sides number, acknowledge and keep reliable messages
    ///     (`Session.Configuration.reconnection = .default`), to measure what that costs.
    /// - Throws: when the host cannot listen or the client cannot connect, or the connection's
    ///   encryption is not what was asked.
    init(encryption: EncryptionPreference, reconnection: Bool = false) async throws {
        host = try await EchoHost(encryption: encryption, reconnection: reconnection)
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        if reconnection { configuration.reconnection = .default }
        client = Session(
            peer: try PeerID(displayName: "bench-client"),
            encryptionPreference: encryption,
            configuration: configuration
        )
        events = client.events.makeAsyncIterator()
        peer = try await client.connectPeer(host: "127.0.0.1", port: host.port, timeout: .seconds(10))
        guard client.securityInfo(for: peer)?.isEncrypted == (encryption == .required) else {
            throw BenchmarkFailure("the connection's encryption is not \(encryption)")
        }
    }

    /// A message of `size` bytes whose first byte asks the host to echo it or count it.
    ///
    /// - Parameters:
    ///   - size: its length, at least 1.
    ///   - kind: ``EchoHost/echo`` or ``EchoHost/count``.
    /// - Returns: the message.
    static func message(size: Int, kind: UInt8) -> Data {
        var message = Data(repeating: 0x42, count: size)
        message[0] = kind
        return message
    }

    /// Sends `message` and waits for its echo, `count` times.
    ///
    /// - Parameters:
    ///   - message: a message starting with ``EchoHost/echo``.
    ///   - count: round trips.
    /// - Throws: ``BenchmarkFailure`` when an echo differs or the host leaves.
    func roundTrips(_ message: Data, count: Int) async throws {
        for _ in 0..<count {
            try await client.send(message, toPeers: [peer])
            guard try await nextData() == message else { throw BenchmarkFailure("an echo differs") }
        }
    }

    /// Sends `message` `count` times one way, then waits for the host to confirm it counted them all.
    ///
    /// - Parameters:
    ///   - message: a message starting with ``EchoHost/count``.
    ///   - count: messages.
    /// - Throws: ``BenchmarkFailure`` when the host counted another number or left.
    func oneWay(_ message: Data, count: Int) async throws {
        for _ in 0..<count {
            try await client.send(message, toPeers: [peer])
        }
        try await client.send(Data([EchoHost.done]), toPeers: [peer])
        let reply = try await nextData()
        let counted = reply.dropFirst().reduce(0) { $0 << 8 | Int($1) }
        guard counted == count else { throw BenchmarkFailure("the host counted \(counted) of \(count) messages") }
    }

    /// The next message the client receives.
    private func nextData() async throws -> Data {
        while let event = await events.next() {
            switch event {
            case .dataReceived(let data, _, _):
                return data
            case .peerStateChanged(_, .notConnected, let reason):
                throw BenchmarkFailure("disconnected: \(String(describing: reason))")
            case .peerStateChanged, .streamReceived, .startedReceivingResource, .finishedReceivingResource:
                continue
            }
        }
        throw BenchmarkFailure("the client session ended")
    }

    /// Disconnects the client and stops the host.
    func stop() async {
        await client.disconnect()
        await host.stop()
    }
}
