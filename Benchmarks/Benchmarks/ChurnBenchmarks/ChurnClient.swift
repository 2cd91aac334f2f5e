import BenchmarkSupport
import Foundation
import PeerConnectivity

/// Sessions that come and go as the tools' runners do (churn-bench's client): each connects directly,
/// waits for the reflector's hello, sends one 64-byte message, waits for its echo and leaves.
enum ChurnClient {
    /// Runs `count` sessions one after another, each with a peer of its own.
    ///
    /// - Parameters:
    ///   - count: sessions to run.
    ///   - port: the reflector's session port on 127.0.0.1.
    ///   - encryption: the sessions' preference (the reflector's must allow it).
    ///   - first: the index of the first session, so that every peer's name differs.
    /// - Throws: ``BenchmarkFailure`` when the reflector leaves before the echo; the invitation's error when
    ///   a session cannot connect.
    static func run(count: Int, port: Int, encryption: EncryptionPreference, first: Int) async throws {
        for index in first..<(first + count) {
            try await once(index: index, port: port, encryption: encryption)
        }
    }

    private static func once(index: Int, port: Int, encryption: EncryptionPreference) async throws {
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        let session = Session(
            peer: try PeerID(displayName: "churn-\(index)"),
            encryptionPreference: encryption,
            configuration: configuration
        )
        var events = session.events.makeAsyncIterator()
        let reflector = try await session.connectPeer(host: "127.0.0.1", port: port, timeout: .seconds(10))
        let message = Data(repeating: UInt8(truncatingIfNeeded: index), count: 64)
        var messages = 0
        while let event = await events.next() {
            if case .peerStateChanged(_, .notConnected, _) = event { break }
            guard case .dataReceived(let data, _, _) = event else { continue }
            messages += 1
            if messages == 1 {  // the reflector's hello
                try await session.send(message, toPeers: [reflector])
            } else if data == message {
                break
            }
        }
        guard messages >= 2 else { throw BenchmarkFailure("session \(index): the reflector left before its echo") }
        await session.disconnect()
    }
}
