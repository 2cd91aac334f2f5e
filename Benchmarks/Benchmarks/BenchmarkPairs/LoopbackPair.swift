import Foundation
import PeerConnectivity
import PeerConnectivityBench

/// The tools' reflector, in-process (``InProcessReflector``), and a client session connected to it
/// directly over loopback (no DNS-SD), with the client's event iterator kept across iterations so that
/// measuring makes no new subscriber.
package final class LoopbackPair {
    /// The accepting side.
    package let host: InProcessReflector
    /// The dialing side, whose sends are measured.
    package let client: Session
    /// The reflector's peer, as the client knows it.
    package let peer: PeerID
    private var events: Session.Events.Iterator
    /// Answers the echoes where the client reads them, for ``answeredRoundTrips(_:count:)``.
    private let volley: Volley?

    /// Starts a reflector, connects a client to it and reads its hello.
    ///
    /// - Parameters:
    ///   - encryption: both sides' preference (`.none` for plain TCP, `.required` for TLS 1.3).
    ///   - reconnection: both sides number, acknowledge and keep reliable messages
    ///     (`Session.Configuration.reconnection = .default`), to measure what that costs.
    ///   - answering: the client answers echoes where it reads them (its responder), for
    ///     ``answeredRoundTrips(_:count:)``.
    /// - Throws: when the reflector cannot listen or the client cannot connect, the connection's
    ///   encryption is not what was asked, or no hello comes.
    package init(encryption: EncryptionPreference, reconnection: Bool = false, answering: Bool = false) async throws {
        await LoopPinning.pinSharedGroup()
        host = try await InProcessReflector(encryption: encryption, reconnection: reconnection)
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        if reconnection { configuration.reconnection = .default }
        volley = answering ? Volley() : nil
        configuration.messageResponder = volley?.responder
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
        guard try await nextData().starts(with: ReflectorHello.prefix) else {
            throw BenchmarkFailure("the reflector's first message is not its hello")
        }
    }

    /// A message of `size` bytes, none of the reflector's control messages.
    ///
    /// - Parameter size: its length.
    /// - Returns: the message.
    package static func message(size: Int) -> Data {
        Data(repeating: 0x42, count: size)
    }

    /// Sends `message` and waits for its echo, `count` times.
    ///
    /// - Parameters:
    ///   - message: a message from ``message(size:)``.
    ///   - count: round trips.
    /// - Throws: ``BenchmarkFailure`` when an echo differs or the reflector leaves.
    package func roundTrips(_ message: Data, count: Int) async throws {
        for _ in 0..<count {
            try await client.send(message, toPeers: [peer])
            guard try await nextData() == message else { throw BenchmarkFailure("an echo differs") }
        }
    }

    /// Sends `message` and answers each echo with it again where the client reads (see ``Volley``), until
    /// `count` echoes have come back. The pair must be made `answering`.
    ///
    /// - Parameters:
    ///   - message: a message from ``message(size:)``.
    ///   - count: round trips.
    /// - Throws: ``BenchmarkFailure`` when an echo differs or the first send fails.
    package func answeredRoundTrips(_ message: Data, count: Int) async throws {
        guard let volley else { throw BenchmarkFailure("the pair was not made answering") }
        let (client, peer) = (self.client, self.peer)
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            volley.start(message, count: count, done: done)
            Task {
                do {
                    try await client.send(message, toPeers: [peer])
                } catch {
                    volley.fail(error)
                }
            }
        }
    }

    /// Sends `message` `count` times one way between a `MessageFlow` start and end, then waits for the
    /// reflector's receipt of the bytes it counted.
    ///
    /// The payload is not the runner's pattern: the reflector finds that in the first message and checks
    /// no other, so what is measured is the library's path, not a check of every byte.
    ///
    /// - Parameters:
    ///   - message: a message from ``message(size:)``.
    ///   - count: messages.
    /// - Throws: ``BenchmarkFailure`` when the reflector counted another number or left.
    package func oneWay(_ message: Data, count: Int) async throws {
        try await client.send(MessageFlow.start(size: message.count).encoded(), toPeers: [peer])
        for _ in 0..<count {
            try await client.send(message, toPeers: [peer])
        }
        try await client.send(MessageFlow.end(size: message.count).encoded(), toPeers: [peer])
        guard let receipt = StreamReceipt.decoded(from: try await nextData()),
            receipt.name == MessageFlow.receiptName
        else { throw BenchmarkFailure("the reflector answered the flow's end with no receipt") }
        guard receipt.bytes == message.count * count else {
            throw BenchmarkFailure("the reflector counted \(receipt.bytes) of \(message.count * count) bytes")
        }
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

    /// Disconnects the client and stops the reflector.
    package func stop() async {
        volley?.fail(BenchmarkFailure("stopped"))
        await client.disconnect()
        await host.stop()
    }
}
