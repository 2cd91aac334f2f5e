import Foundation
import PeerConnectivity

/// Sessions that come and go against a reflector, as runners do: each connects directly, waits for the
/// reflector's hello, sends one 64-byte message, waits for its echo and leaves. What a long-running
/// reflector keeps of each ended session shows as the growth of its resident memory over many of them.
public enum SessionChurn {
    /// Runs `count` sessions one after another.
    ///
    /// - Parameters:
    ///   - host: the reflector's address.
    ///   - port: its session port.
    ///   - count: sessions to run.
    ///   - encryption: the sessions' encryption preference (the reflector's must allow it).
    ///   - first: the number in the first session's name ("churn-N"), the next ones counting up.
    /// - Throws: ``BenchError/disconnected(_:)`` when the reflector leaves before the echo; the
    ///   invitation's error when a session cannot connect.
    public static func run(
        host: String,
        port: Int,
        count: Int,
        encryption: EncryptionPreference,
        first: Int = 0
    ) async throws {
        for index in first..<(first + count) {
            try await once(host: host, port: port, index: index, encryption: encryption)
        }
    }

    private static func once(host: String, port: Int, index: Int, encryption: EncryptionPreference) async throws {
        var configuration = Session.Configuration.default
        configuration.joinsMesh = false
        let session = Session(
            peer: try PeerID(displayName: "churn-\(index)"),
            encryptionPreference: encryption,
            configuration: configuration
        )
        var events = session.events.makeAsyncIterator()
        let reflector = try await session.connectPeer(host: host, port: port, timeout: .seconds(10))
        let message = Data(repeating: UInt8(truncatingIfNeeded: index), count: 64)
        var messages = 0
        var ending = "its session ended"
        while let event = await events.next() {
            if case .peerStateChanged(_, .notConnected, let reason) = event {
                ending = "notConnected, reason: \(reason.map { "\($0)" } ?? "none")"
                break
            }
            guard case .dataReceived(let data, _, _) = event else { continue }
            messages += 1
            if messages == 1 {  // the reflector's hello
                try await session.send(message, toPeers: [reflector])
            } else if data == message {
                break
            }
        }
        guard messages >= 2 else {
            throw BenchError.disconnected(
                "session \(index): the reflector left before its echo (\(messages) messages seen; \(ending))"
            )
        }
        await session.disconnect()
    }
}
