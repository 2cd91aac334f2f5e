import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport

/// Streams, resources and large messages that peers open to this session: each channel gets its
/// receiving end (an ``IncomingTransfer``), kept in `transfers` until it ends.
extension SessionRuntime {
    /// - Returns: whether to go on reading: a large message delivered at its END counts toward the
    ///   receive backlog as any message does.
    func channel(_ event: IncomingChannelEvent, from peer: PeerID, on connection: Connection) -> ConnectionReadDemand {
        notePeerFrame(from: peer, on: connection)
        switch event {
        case .opened(let open):
            opened(open, on: connection, from: peer)
        case .block(let channel, let index, let digest):
            transfers.withLock { $0[TransferKey(connection, channel)] }?.blockStarted(index, digest: digest)
        case .received(let channel, let bytes):
            transfers.withLock { $0[TransferKey(connection, channel)] }?.received(bytes)
        case .ended(let channel, let digest):
            let transfer = transfers.withLock { table -> (any IncomingTransfer)? in
                let key = TransferKey(connection, channel)
                guard let transfer = table[key] else { return nil }
                if transfer.endsAtEnd { table[key] = nil }
                return transfer
            }
            if let message = transfer as? MessageReceiver {
                // Confirmed before it is read, as a DATA frame is by being received: the sender's `send`
                // returns, and the application's pace holds up reading below, not the sender's confirmation.
                connection.sendControl(.done(channel: channel))
                return respondOrDeliver(message.takeMessage(), from: peer, on: connection)
            }
            transfer?.ended(digest: digest)
        case .reset(let channel, let code):
            guard let transfer = transfers.withLock({ $0.removeValue(forKey: TransferKey(connection, channel)) })
            else { return .more }
            transfer.failed(.from(code, byPeer: true, peer: peer, name: transfer.name))
        }
        return .more
    }

    private func opened(_ open: Frame.Open, on connection: Connection, from peer: PeerID) {
        let name = String(decoding: open.name, as: UTF8.self)
        switch open.kind {
        case .message:
            // The size was checked against this side's limit at OPEN (``ChannelTable``).
            guard let (reservation, buffer) = admitsMessage(open, from: peer, on: connection) else { return }
            let receiver = MessageReceiver(
                peer: peer,
                connection: connection,
                channel: open.channel,
                buffer: buffer,
                window: max(configuration.streamWindow, WireProtocol.initialChannelWindow),
                reservation: reservation
            )
            transfers.withLock { $0[TransferKey(connection, open.channel)] = receiver }
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
        case .resource, .folder:
            guard admits(open, named: name, from: peer, on: connection) else { return }
            let key = TransferKey(connection, open.channel)
            let places = IncomingResourcePlaces(session: incomingResources)
            let finish: @Sendable (Result<URL, TransferError>) -> Void = { [weak self] result in
                self?.resourceFinished(key, name: name, from: peer, result: result)
            }
            // Two blocks at least: a block's credit comes back once it is whole and hashed.
            let window = max(configuration.resourceWindow, 2 * WireProtocol.resourceBlockLength)
            let limits = PartialResourceStore.Limits(
                lifetime: configuration.partialResourceLifetime.inSeconds,
                maximumBytes: configuration.maximumPartialResourceBytes
            )
            let digestKind = blockDigestKind(peer)
            // One receiving shell for files and folders; the writer is what differs.
            func receiver(writingWith writer: some BlockWriter) -> any IncomingResource {
                BlockReceiver(
                    open: open,
                    writer: writer,
                    peer: peer,
                    connection: connection,
                    window: window,
                    places: places,
                    onFinish: finish
                )
            }
            let receiver =
                open.kind == .folder
                ? receiver(
                    writingWith: FolderWriter(
                        open: open,
                        peer: peer,
                        directoryPath: configuration.resourceDirectory.path,
                        maximumEntries: configuration.maximumFolderEntries,
                        digestKind: digestKind,
                        limits: limits
                    )
                )
                : receiver(
                    writingWith: FileWriter(
                        open: open,
                        peer: peer,
                        directory: configuration.resourceDirectory,
                        digestKind: digestKind,
                        limits: limits
                    )
                )
            transfers.withLock { $0[key] = receiver }
            resourcesInFlight.started(
                TransferRecord(name: name, peer: peer, isIncoming: true, progress: receiver.progress),
                key: .channel(key)
            )
            events.yield(.startedReceivingResource(name: name, from: peer, progress: receiver.progress))
            receiver.start()
        }
    }

    /// The place in the memory budget for a large message a peer opened, and the buffer it is gathered
    /// into; nil when the session, or the process, holds as much of large messages being gathered as it
    /// takes (or the kernel maps no memory): then it is refused (RESET 8, busy) with a warning, and the
    /// sender may try again.
    private func admitsMessage(
        _ open: Frame.Open,
        from peer: PeerID,
        on connection: Connection
    ) -> (LargeMessageMemory.Reservation, MappedMessageBuffer)? {
        let limits = LargeMessageBudget<UInt64>.Limits(
            perOwner: configuration.largeMessageBudget,
            total: configuration.processLargeMessageBudget,
            largestMessage: configuration.maximumMessageLength
        )
        let why: String
        switch LargeMessageMemory.process.reserve(Int(open.size), for: messageOwner, within: limits) {
        case .success(let reservation):
            // Only address space until chunks are written into it.
            if let buffer = MappedMessageBuffer(capacity: Int(open.size)) { return (reservation, buffer) }
            reservation.release()
            why = "no memory could be mapped for it"
        case .failure(let refusal):
            why = "\(refusal)"
        }
        connectionConfiguration.warnings.warn(
            "refused a message of \(open.size) bytes from \(peer) (busy): \(why)",
            to: configuration.logger
        )
        connection.resetIncomingChannel(open.channel, .busy)
        return nil
    }

    /// Whether a resource or folder offered by a peer is taken; if not, it is refused (RESET) with a warning.
    private func admits(_ open: Frame.Open, named name: String, from peer: PeerID, on connection: Connection) -> Bool {
        guard let (code, why) = refusal(of: open) else { return true }
        connectionConfiguration.warnings.warn(
            "refused \(open.kind) \"\(LogSafe.escaped(name, limit: 80))\" from \(peer): \(why)",
            to: configuration.logger
        )
        connection.resetIncomingChannel(open.channel, code)
        return false
    }

    /// Why a resource offered by a peer is refused before anything is written, if it is: larger than
    /// the configured maximum or than the free space of the resource directory, or no place free for it
    /// (in this session or in the process). A resource that is not refused has taken its places, which
    /// its receiver gives back (``IncomingResourcePlaces``).
    private func refusal(of open: Frame.Open) -> (ChannelResetCode, String)? {
        if let maximum = configuration.maximumResourceSize, open.size > maximum {
            return (.tooLarge, "\(open.size) bytes announced, at most \(maximum) accepted")
        }
        guard incomingResources.take() else {
            return (.busy, "\(incomingResources.limit) resources are arriving already")
        }
        guard IncomingResourceSlots.process.take() else {
            incomingResources.give()
            return (.busy, "the process has \(IncomingResourceSlots.process.limit) resource files open")
        }
        // Last: a resource admitted here is taken off the free space the next ones are judged against.
        if let free = freeSpace.refuses(open.size) {
            incomingResources.give()
            IncomingResourceSlots.process.give()
            return (.noSpace, "\(open.size) bytes announced, \(free) free in \(configuration.resourceDirectory.path)")
        }
        return nil
    }

    private func resourceFinished(
        _ key: TransferKey,
        name: String,
        from peer: PeerID,
        result: Result<URL, TransferError>
    ) {
        // Its places were given back by the receiver, before it told the sender.
        transfers.withLock { $0[key] = nil }
        resourcesInFlight.ended(.channel(key))
        if case .failure(let error) = result, error == .refused(peer: peer, name: name) {
            // A folder over one of this side's limits, refused midway: logged as a refusal at OPEN is.
            let why = error.detail ?? "over a limit"
            connectionConfiguration.warnings.warn(
                "refused folder \"\(LogSafe.escaped(name, limit: 80))\" from \(peer): \(why)",
                to: configuration.logger
            )
        }
        events.yield(.finishedReceivingResource(name: name, from: peer, result: result))
    }
}
