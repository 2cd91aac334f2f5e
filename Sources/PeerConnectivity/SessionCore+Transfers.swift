import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Streams and resources that peers open to this session: each channel gets its receiving end (an
/// ``InboundTransfer``), kept in `transfers` until it ends.
extension SessionCore {
    func connection(_ connection: Connection, channelEvent event: InboundChannelEvent, from peer: PeerID) {
        notePeerFrame(from: peer, on: connection)
        switch event {
        case .opened(let open):
            opened(open, on: connection, from: peer)
        case .received(let channel, let bytes):
            transfers.withLock { $0[TransferKey(connection, channel)] }?.received(bytes)
        case .ended(let channel, let digest):
            let transfer = transfers.withLock { table -> (any InboundTransfer)? in
                let key = TransferKey(connection, channel)
                guard let transfer = table[key] else { return nil }
                if transfer.endsAtEnd { table[key] = nil }
                return transfer
            }
            transfer?.ended(digest: digest)
        case .reset(let channel, let code):
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: TransferKey(connection, channel)) })
            else { return }
            transfer.failed(.from(code, byPeer: true, peer: peer, name: transfer.name))
        }
    }

    private func opened(_ open: Frame.Open, on connection: Connection, from peer: PeerID) {
        let name = String(decoding: open.name, as: UTF8.self)
        switch open.kind {
        case .stream:
            let receiver = StreamReceiver(
                name: name,
                peer: peer,
                connection: connection,
                channel: open.channel,
                window: max(configuration.streamWindow, WireProtocol.initialChannelWindow)
            )
            transfers.withLock { $0[TransferKey(connection, open.channel)] = receiver }
            events.yield(.streamReceived(IncomingStream(receiver: receiver)))
        case .resource:
            let key = TransferKey(connection, open.channel)
            let receiver = ResourceReceiver(
                open: open,
                peer: peer,
                connection: connection,
                directory: configuration.resourceDirectory,
                window: max(configuration.resourceWindow, WireProtocol.initialChannelWindow)
            ) { [weak self] result in
                self?.resourceFinished(key, name: name, from: peer, result: result)
            }
            transfers.withLock { $0[key] = receiver }
            resourcesInFlight.started(
                TransferRecord(name: name, peer: peer, isIncoming: true, progress: receiver.progress),
                key: .channel(key)
            )
            events.yield(.startedReceivingResource(name: name, from: peer, progress: receiver.progress))
            receiver.start()
        }
    }

    private func resourceFinished(
        _ key: TransferKey,
        name: String,
        from peer: PeerID,
        result: Result<URL, TransferError>
    ) {
        transfers.withLock { $0[key] = nil }
        resourcesInFlight.ended(.channel(key))
        events.yield(.finishedReceivingResource(name: name, from: peer, result: result))
    }
}
