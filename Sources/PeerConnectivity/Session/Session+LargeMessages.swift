import Foundation
import PeerConnectivityCore
import PeerConnectivityTransport

/// Reliable messages over ``WireProtocol/inlineMessageLimit`` (1 MiB): each travels as a channel of kind
/// message (OPEN with its size, CHUNKs, END), paced with the streams and resources behind the small
/// messages, so that it never holds them up for long (see docs/PROTOCOL.md).
extension Session {
    /// Bytes of large messages this session is gathering from its peers now, as counted against
    /// ``Configuration/largeMessageBudget`` (tests).
    package var largeMessageBytesGathering: Int {
        LargeMessageMemory.process.held(by: runtime.messageOwner)
    }

    /// Sends a large message to every target at once, and returns when every target has confirmed it
    /// whole (DONE), or throws the first failure once every transfer has ended.
    ///
    /// Not resumed by reconnection: the target must be connected now, and a link that drops during
    /// the transfer fails it with ``SessionError/peerNotConnected(_:reason:)``.
    func sendLarge(_ data: Data, to peers: [PeerID]) async throws {
        let connections = try runtime.connections(to: peers, carrying: data.count)
        if peers.count == 1 {
            try await Self.sendLarge(data, on: connections[0], to: peers[0])
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (peer, connection) in zip(peers, connections) {
                group.addTask { try await Self.sendLarge(data, on: connection, to: peer) }
            }
            var failure: (any Error)?
            while let result = await group.nextResult() {
                if case .failure(let error) = result, failure == nil { failure = error }
            }
            if let failure { throw failure }
        }
    }

    /// One target: its turn (one large message at a time per connection, in the order the sends began),
    /// OPEN, the CHUNKs as the peer's credit allows, END, then the peer's DONE.
    ///
    /// Cancelling the task ends it at any of these stages with `CancellationError`: waiting for its turn, it
    /// leaves the line; once its channel is open (its chunks under way, or all sent and DONE awaited), the
    /// channel is reset (RESET 1, cancelled), which drops its queued chunks here and what the peer gathered
    /// there; either way the turn passes to the next message, and the caller's bytes are no longer held.
    static func sendLarge(_ data: Data, on connection: Connection, to peer: PeerID) async throws {
        let channel: UInt32
        do {
            try await connection.beginMessage()
        } catch let error as ConnectionClosedError {
            throw SessionError.peerNotConnected(peer, reason: error.reason)
        }
        defer { connection.endMessage() }
        // Handed the turn just as it was cancelled: it opens nothing.
        try Task.checkCancellation()
        do {
            channel = try connection.openChannel(kind: .message, size: UInt64(data.count), name: [])
        } catch let error as ConnectionClosedError {
            throw SessionError.peerNotConnected(peer, reason: error.reason)
        }
        do {
            try await connection.sendChunks(of: data, on: channel)
            try connection.finishChannel(channel, digest: nil)
            try await connection.waitForDone(on: channel)
        } catch {
            // Lets go of the channel's record; tells the peer (RESET) unless it ended the channel itself.
            connection.resetChannel(channel, .cancelled)
            throw sessionError(for: error, size: data.count, on: connection, to: peer)
        }
    }

    private static func sessionError(
        for error: any Error,
        size: Int,
        on connection: Connection,
        to peer: PeerID
    ) -> any Error {
        guard let error = error as? ChannelClosedError else { return error }
        switch error.cause {
        case .connectionClosed(let reason):
            return SessionError.peerNotConnected(peer, reason: reason)
        case .reset(.tooLarge, byPeer: true):
            return SessionError.messageTooLargeForPeer(
                peer,
                size: size,
                limit: connection.peerMaximumMessageLength ?? 0
            )
        case .reset(let code, let byPeer):
            return SessionError.messageNotDelivered(peer, detail: byPeer ? "the peer reset it (\(code))" : "\(code)")
        }
    }
}
