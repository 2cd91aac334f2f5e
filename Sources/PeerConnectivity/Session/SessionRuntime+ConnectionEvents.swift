import Foundation
import NIOCore
import NIOFoundationCompat
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The connection events of the session's connections, on their event loops: ``SessionRuntime`` is every
/// such connection's ``ConnectionDelegate``.
extension SessionRuntime {
    func connection(_ connection: Connection, handle event: ConnectionEvent) -> ConnectionReadDemand {
        switch event {
        case .message(let message, let peer):
            return received(message, from: peer, on: connection)
        case .identified(let peer):
            identified(peer, on: connection)
        case .invitation(let peer, _, _):
            // Only the session's own listener hands invitations here: members connecting (mesh).
            meshInvitation(connection, from: peer)
        case .established(let peer):
            established(peer, on: connection)
        case .datagramEndpoint(let port, let token, let peer):
            notePeerFrame(from: peer, on: connection)
            datagrams.peerEndpoint(port: port, token: token, on: connection)
        case .datagramKey(let key, _):
            datagrams.peerKey(key, on: connection)
        case .membership(let frame, let peer):
            membership(frame, from: peer, on: connection)
        case .channel(let channelEvent, let peer):
            return channel(channelEvent, from: peer, on: connection)
        case .resumeRequested(let peer, let secret, let peerExpects):
            resumeRequested(by: peer, secret: secret, peerExpects: peerExpects, on: connection)
        case .resumed(let peer, let peerExpects):
            resumed(peer, peerExpects: peerExpects, on: connection)
        case .resumeSecret(let secret, let peer):
            resumeSecret(secret, from: peer, on: connection)
        case .acknowledged(let count, let peer):
            acknowledged(count, from: peer, on: connection)
        case .closed(let peer, let reason):
            closed(connection, peer: peer, reason: reason)
        }
        return .more
    }

    func identified(_ peer: PeerID, on connection: Connection) {
        var replaced: Connection?
        let refusal = withPeers { table -> Refusal? in
            switch table.identified(peer, on: connection) {
            case .proceed(let connection):
                replaced = connection
                return nil
            case .refuse(let error):
                return .error(error)
            case .lostTieBreak:
                return .lostTieBreak(peer)
            }
        }
        replaced?.close(.duplicate.with(detail: "a simultaneous invitation won the tie-break"))
        switch refusal {
        case .error(let error):
            refusals.withLock { $0[ObjectIdentifier(connection)] = refusal }
            connection.close(.localDisconnect.with(detail: error.description))
        case .lostTieBreak:
            refusals.withLock { $0[ObjectIdentifier(connection)] = refusal }
            connection.close(.duplicate.with(detail: "the peer's simultaneous invitation won the tie-break"))
        case .none:
            break
        }
    }

    func established(_ peer: PeerID, on connection: Connection) {
        let ours = withPeers { table -> [CheckedContinuation<Void, any Error>]? in
            guard let waiters = table.established(peer, on: connection) else { return nil }
            table[peer]?.peerAccepts = connection.peerMaximumMessageLength
            table[peer]?.peerReadsFolders = connection.peerReadsFolders
            table[peer]?.peerProbesDatagrams = connection.peerProbesDatagrams
            table[peer]?.blockDigestKind = connection.blockDigestKind
            if configuration.reconnection != nil {
                // Before the peer shows connected, so it is the first frame after the handshake.
                let link = PeerTable.Link()
                connection.sendControl(.resumeSecret(link.localSecret))
                table[peer]?.link = link
            }
            return waiters
        }
        for waiter in ours ?? [] { waiter.resume() }
        if ours != nil {
            datagrams.established(connection, with: peer, probes: connection.peerProbesDatagrams)
            meshEstablished(connection)
        } else {
            connection.close(.unexpectedPeer.with(detail: "\(peer) is not expected in this session"))
        }
    }

    func membership(_ frame: Frame, from peer: PeerID, on connection: Connection) {
        notePeerFrame(from: peer, on: connection)
        if case .sessionListener(let port) = frame {
            learnResumeEndpoint(port: port, on: connection, from: peer)
        }
        meshReceived(frame, on: connection, from: peer)
    }

    /// An unreliable message arrived by UDP: offered to the responder, else delivered unless the application
    /// is too far behind.
    func deliverUnreliable(_ data: Data, from peer: PeerID) -> Bool {
        guard state(of: peer) == .connected else { return false }
        if respondUnreliable(data, from: peer) { return true }
        guard events.backlog <= configuration.receiveBufferLimit else { return false }
        events.yield(.dataReceived(data, from: peer, mode: .unreliable), bytes: data.count)
        return true
    }

    func received(_ message: ByteBuffer, from peer: PeerID, on connection: Connection) -> ConnectionReadDemand {
        if configuration.reconnection != nil {
            countReceived(message.readableBytes, from: peer, on: connection)
        }
        // Copied up to the limit the frame reader counts on (it does not compact a read of such messages).
        guard message.readableBytes <= ReceiveBuffer.copiedMessageLimit else {
            return respondOrDeliver(Data(buffer: message, byteTransferStrategy: .noCopy), from: peer, on: connection)
        }
        // Copied straight from the bytes: `Data(buffer:byteTransferStrategy:)` costs about 150 instructions more a
        // message on its way through the strategies. A responder lets go of most messages it answers: the next one
        // of the same length is copied into the same storage, which spares an allocation and a free a message (a
        // message the responder kept is copied on write first, as `Data` is).
        let reusing = hasResponder && message.readableBytes <= Self.reusedMessageLimit
        var data = reusing ? connection.takeMessageStorage() : Data()
        message.withUnsafeReadableBytes { bytes in
            if data.count == bytes.count, let base = bytes.baseAddress {
                data.withUnsafeMutableBytes {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: base, count: bytes.count))
                }
            } else {
                data = bytes.baseAddress.map { Data(bytes: $0, count: bytes.count) } ?? Data()
            }
        }
        return respondOrDeliver(data, from: peer, on: connection, keepingStorage: reusing)
    }

    /// The largest message whose storage a connection keeps for the next one a responder answers: a
    /// delivered message's storage is never kept, so this bounds what an answered one holds.
    static let reusedMessageLimit = 4096

    /// Yields a reliable message (a DATA frame's, or a large message's at its END) and says whether to
    /// go on reading: not while the backlog is over the limit. A message larger than the limit is
    /// delivered all the same; reading then waits until the application has taken most of it.
    func deliverReliable(_ data: Data, from peer: PeerID) -> ConnectionReadDemand {
        let backlog = events.yield(.dataReceived(data, from: peer, mode: .reliable), bytes: data.count)
        guard backlog > configuration.receiveBufferLimit else { return .more }
        readingPaused.store(true, ordering: .sequentiallyConsistent)
        // The subscribers may have drained the backlog before they could see the flag: check again.
        if events.backlog <= configuration.receiveBufferLimit / 2 {
            readingPaused.store(false, ordering: .sequentiallyConsistent)
            return .more
        }
        return .pause
    }

    func closed(_ connection: Connection, peer: PeerID?, reason: DisconnectReason) {
        let ended = transfers.withLock { table -> [any IncomingTransfer] in
            let keys = table.keys.filter { $0.connection == ObjectIdentifier(connection) }
            return keys.compactMap { table.removeValue(forKey: $0) }
        }
        for transfer in ended {
            transfer.failed(.connectionClosed(reason, peer: peer, name: transfer.name))
        }
        datagrams.closed(connection)
        meshClosed(connection)
        guard let peer else { return }
        if reason == .duplicate, awaitReplacement(of: peer, closed: connection) { return }
        if reconnectIfResumable(peer, closed: connection, reason: reason) { return }
        release(peer, connection: connection, reason: reason)
    }
}
