import Dispatch
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization
import SystemPackage

/// The receiving end of one resource: answers its OPEN with the blocks it holds already (HAVE),
/// writes each block's chunks at the block's place in a hidden partial file, checks each block's
/// digest (XXH64) as its last byte lands, and when END arrives checks the root digest (SHA-256 over the
/// block digests), then moves the file to its final name.
///
/// Disk work runs on a serial queue of its own, never on the event loop, and that queue runs on the
/// connection's ``Connection/fileQueue``: nothing here may wait for other work there. Each chunk is hashed right
/// after it is written, on that queue, while it is in the cache (XXH64 costs a few percent of the
/// write); a block's length goes back to the sender's window once it is written and checked, so at
/// most the window waits in memory.
/// Whatever ends the transfer (END, a RESET from either side, the connection closing) ends it once:
/// `onFinish` is called exactly once, after its places are given back and the sender told. A transfer
/// that fails with blocks checked (the connection closed, a block did not match) keeps them in the
/// ``PartialResourceStore`` for the sender to resume; one cancelled, or whose root does not match, keeps
/// nothing.
final class ResourceReceiver: IncomingResource, Sendable {
    private struct State {
        var descriptor: SystemPackage.FileDescriptor?
        var partialPath: String?
        var ledger: ResourceBlockLedger
        /// The block being written, hashed chunk by chunk as each is written.
        var blockHasher = BlockHasher()
        /// A block did not match: nothing more is taken, and the transfer fails keeping the blocks
        /// checked before it.
        var damaged = false
        var finished = false
        /// Blocks checked since the record was last written.
        var checkedSinceSave = 0
        /// Whether the partial file has a record on disk, to remove with it (a small file never has one,
        /// and removing a name that is not there still takes the directory's lock).
        var hasRecord = false
        /// This transfer's mark in the store while it receives (``PartialResourceStore/begin(_:on:deadline:then:)``).
        var storeMark: DispatchGroup?
        /// Bytes written and not yet given back to the sender; an eighth of the window makes a batch.
        var credit: CreditBatch
        /// What the file asks of the page cache as it grows.
        var writeBehind = WriteBehind()
    }

    /// Blocks checked between two writes of the resume record while a transfer runs.
    static let blocksPerSave = 32

    let name: String
    let peer: PeerID
    var endsAtEnd: Bool { false }
    let progress: Progress
    let rawName: [UInt8]
    let size: UInt64
    private let connection: Connection
    private let channel: UInt32
    let directory: URL
    /// `directory.path`, asked once: a small file of a folder would pay for it several times.
    let directoryPath: String
    /// Which resource this is in the ``PartialResourceStore``.
    let storeKey: PartialResourceStore.Key
    private let window: Int
    let limits: PartialResourceStore.Limits
    let store: PartialResourceStore
    private let queue: DispatchQueue
    private let state: Mutex<State>
    private let places: IncomingResourcePlaces
    private let onFinish: @Sendable (Result<URL, TransferError>) -> Void

    init(
        open: Frame.Open,
        peer: PeerID,
        connection: Connection,
        directory: URL,
        window: Int,
        limits: PartialResourceStore.Limits,
        store: PartialResourceStore = .shared,
        places: IncomingResourcePlaces,
        onFinish: @escaping @Sendable (Result<URL, TransferError>) -> Void
    ) {
        self.name = String(decoding: open.name, as: UTF8.self)
        self.rawName = open.name
        self.peer = peer
        self.size = open.size
        self.connection = connection
        self.channel = open.channel
        self.directory = directory
        self.directoryPath = directory.path
        self.storeKey = PartialResourceStore.Key(
            directory: directoryPath,
            peer: peer.id,
            name: open.name,
            size: open.size
        )
        self.window = window
        self.limits = limits
        self.store = store
        let layout = ResourceLayout(size: open.size)
        self.state = Mutex(State(ledger: ResourceBlockLedger(layout: layout), credit: CreditBatch(size: window / 8)))
        self.places = places
        self.onFinish = onFinish
        // No parent: the event loop never has a current `Progress`, and asking for it costs a thread-local lookup.
        self.progress = Progress.discreteProgress(totalUnitCount: Int64(clamping: open.size))
        // Its own serial queue, on the connection's: the files of one connection are written by one thread
        // at a time, so a folder's small files run back to back instead of each waking a thread.
        self.queue = DispatchQueue(label: "PeerConnectivity.resource.\(open.channel)", target: connection.fileQueue)
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// Opens the partial file (one kept from an earlier attempt, its blocks hashed again, or a new
    /// one), answers HAVE, and widens the window to ``Session/Configuration/resourceWindow`` (or to the
    /// resource's length, if that is less).
    func start() {
        queue.async { [self] in
            // A resource resumed at once on a new connection may arrive before the transfer on the old
            // one has kept its blocks: the store goes on once it has, without holding the queue (which
            // other resources of the connection share).
            store.begin(storeKey, on: queue) { [self] mark in open(mark: mark) }
        }
    }

    /// The rest of ``start()``, on the queue, with the store's mark.
    private func open(mark: DispatchGroup?) {
        do {
            let layout = ResourceLayout(size: size)
            let opened: OpenedPartial
            do {
                opened = try openPartial(layout: layout)
            } catch {
                if let mark { store.end(storeKey, mark: mark) }
                throw error
            }
            let ledger = ResourceBlockLedger(layout: layout, kept: opened.kept)
            let open = state.withLock { state -> Bool in
                guard !state.finished else { return false }
                state.descriptor = opened.descriptor
                state.partialPath = opened.path
                state.hasRecord = opened.hasRecord
                state.ledger = ledger
                state.storeMark = mark
                return true
            }
            guard open else {
                try? opened.descriptor.close()
                PartialResourceStore.remove(opened.path, withRecord: opened.hasRecord)
                if let mark { store.end(storeKey, mark: mark) }
                return
            }
            let held = ledger.heldBlocks
            let have =
                held.isEmpty
                ? Frame.Have.nothing
                : Frame.Have(
                    digest: ResourceFileIO.heldDigest(ledger.heldDigests),
                    bitmap: layout.bitmap(of: held)
                )
            answerOpen(
                have,
                resumed: held.isEmpty ? 0 : ledger.heldBytes,
                on: channel,
                of: connection,
                window: window,
                size: size
            )
        } catch {
            fail(.failed(peer: peer, name: name, detail: "\(error)"), resetCode: .failed, keep: false)
        }
    }

    // MARK: - From the connection (event loop)

    func blockStarted(_ index: Int, digest: [UInt8]) {
        queue.async { [self] in
            let started = state.withLock { state -> (Bool, replaced: Int?)? in
                guard !state.finished, !state.damaged, state.descriptor != nil else { return nil }
                let held = state.ledger.isHeld(index)
                guard state.ledger.blockStarted(index, digest: digest) != nil else { return (false, nil) }
                state.blockHasher = BlockHasher()
                return (true, held ? state.ledger.layout.length(of: index) : nil)
            }
            guard let (accepted, replaced) = started else { return }
            guard accepted else {
                let detail = "block \(index) came again before its first copy was checked"
                fail(.failed(peer: peer, name: name, detail: detail), resetCode: .failed, keep: false)
                return
            }
            // The sender did not take the blocks offered (its file differs): they cross again, and
            // count again as they do.
            if let replaced {
                progress.completedUnitCount = max(0, progress.completedUnitCount - Int64(replaced))
                let resumed = (progress.userInfo[.resumedByteCountKey] as? NSNumber)?.int64Value ?? 0
                progress.setUserInfoObject(
                    NSNumber(value: max(0, resumed - Int64(replaced))),
                    forKey: .resumedByteCountKey
                )
            }
        }
    }

    func received(_ bytes: ByteBuffer) {
        queue.async { [self] in
            // The file is written and the block hashed outside the lock: only this queue writes the file,
            // closes it or touches the block's hasher, so none of them changes in between.
            let taken = state.withLock {
                state -> (SystemPackage.FileDescriptor, offset: UInt64, completes: Bool, BlockHasher)? in
                guard !state.finished, !state.damaged, let descriptor = state.descriptor else { return nil }
                let (offset, completes) = state.ledger.chunkArrived(length: bytes.readableBytes)
                return (descriptor, offset, completes, state.blockHasher)
            }
            guard let (descriptor, offset, completes, blockHasher) = taken else { return }
            var hasher = blockHasher
            do {
                // Hashed right after it is written, while it is in this thread's cache.
                try bytes.withUnsafeReadableBytes { buffer in
                    try ResourceFileIO.write(buffer, at: offset, to: descriptor)
                    hasher.update(buffer)
                }
                let end = offset + UInt64(bytes.readableBytes)
                let (advice, index) = state.withLock { state -> (WriteBehind.Advice, blockIndex: Int) in
                    state.blockHasher = completes ? BlockHasher() : hasher
                    return (state.writeBehind.wrote(upTo: end), state.ledger.layout.blockIndex(containing: offset))
                }
                Self.advise(advice, descriptor: descriptor)
                progress.completedUnitCount = min(
                    progress.totalUnitCount,
                    progress.completedUnitCount + Int64(bytes.readableBytes)
                )
                if completes { judge(index, hasher.finalize()) }
            } catch let failure as POSIXFailure where failure.code == .noSpace || failure.code == .diskQuotaExceeded {
                // The sender learns why (RESET no space), not only that something failed.
                fail(.failed(peer: peer, name: name, detail: "writing: \(failure)"), resetCode: .noSpace, keep: false)
            } catch {
                fail(.failed(peer: peer, name: name, detail: "writing: \(error)"), resetCode: .failed, keep: true)
            }
        }
    }

    /// Judges a whole block, written and hashed, on the queue. The block's credit goes back to the
    /// sender only then, so the window bounds the bytes not yet written and checked.
    private func judge(_ index: Int, _ digest: [UInt8]) {
        let judged = state.withLock { state -> (ResourceBlockLedger.Verdict?, grant: Int)? in
            guard !state.finished else { return nil }
            let verdict = state.ledger.blockHashed(index, digest)
            if case .verified = verdict { state.checkedSinceSave += 1 }
            if case .mismatch = verdict { state.damaged = true }
            return (verdict, state.credit.took(state.ledger.layout.length(of: index)))
        }
        guard let (verdict, grant) = judged else { return }
        if grant > 0 { connection.grantCredit(grant, on: channel) }
        switch verdict {
        case .mismatch:
            fail(.digestMismatch(peer: peer, name: name), resetCode: .blockMismatch, keep: true)
        case .verified:
            saveRecordIfDue()
        case nil:
            break
        }
    }

    func ended(digest root: [UInt8]?) {
        // Every block that came before END has been written and judged on the queue by then.
        queue.async { [self] in judgeEnd(root: root) }
    }

    private func judgeEnd(root: [UInt8]?) {
        let outcome = state.withLock { state -> (String, ResourceBlockLedger.Outcome)? in
            // A damaged block fails the transfer on its own, keeping what was checked.
            guard !state.finished, !state.damaged, let path = state.partialPath else { return nil }
            return (path, state.ledger.outcomeAtEnd)
        }
        guard let (path, outcome) = outcome else { return }
        switch outcome {
        case .missing(let blocks):
            let detail = "\(blocks.count) blocks never arrived (the first: \(blocks[0]))"
            fail(.sizeMismatch(peer: peer, name: name, detail: detail), resetCode: .sizeMismatch, keep: false)
        case .whole(let digests):
            let computed = ResourceFileIO.digest(of: ResourceLayout(size: size).rootInput(digests: digests))
            guard computed == root else {
                fail(.digestMismatch(peer: peer, name: name), resetCode: .digestMismatch, keep: false)
                return
            }
            do {
                let url = try place(path)
                // The partial name went with the move; a record kept for a resume is left to remove.
                let hadRecord = state.withLock { state in
                    state.partialPath = nil
                    return state.hasRecord
                }
                if hadRecord { PartialResourceStore.removeRecord(of: path) }
                guard finishOnce(keep: false) else { return }
                connection.sendControl(.done(channel: channel))
                onFinish(.success(url))
            } catch {
                fail(.failed(peer: peer, name: name, detail: "\(error)"), resetCode: .failed, keep: false)
            }
        }
    }

    func failed(_ error: TransferError) {
        queue.async { [self] in
            // A sender that cancels wants nothing kept; a link that drops leaves the blocks to resume.
            guard finishOnce(keep: error != .cancelledByPeer(peer: peer, name: name)) else { return }
            onFinish(.failure(error))
        }
    }

    /// This side cancels (its `Progress`): the sender gets a cancelled error, this side too.
    func cancel() {
        queue.async { [self] in
            fail(.cancelled(peer: peer, name: name), resetCode: .cancelled, keep: false)
        }
    }

    // MARK: - On the queue

    /// Ends the transfer with `error`, tells the sender (RESET), and keeps or removes the partial file.
    private func fail(_ error: TransferError, resetCode: ChannelResetCode, keep: Bool) {
        guard finishOnce(keep: keep) else { return }
        connection.resetIncomingChannel(channel, resetCode)
        onFinish(.failure(error))
    }

    /// Marks the transfer finished and closes the file; keeps its checked blocks for a resume when
    /// `keep`, else removes the partial file (after ``place(_:)`` there is none left to remove).
    /// `false` if it had already finished.
    private func finishOnce(keep: Bool) -> Bool {
        let taken = state.withLock {
            state -> (
                SystemPackage.FileDescriptor?, String?, Bool, (PartialResourceRecord, [Int: [UInt8]])?, DispatchGroup?
            )?
            in
            guard !state.finished else { return nil }
            state.finished = true
            defer {
                state.descriptor = nil
                state.partialPath = nil
                state.storeMark = nil
            }
            let kept = keep ? (record(of: state.ledger), state.ledger.heldByIndex) : nil
            return (state.descriptor, state.partialPath, state.hasRecord, kept, state.storeMark)
        }
        guard let (descriptor, partial, hasRecord, kept, mark) = taken else { return false }
        places.giveBack()
        try? descriptor?.close()
        if let partial {
            if let (record, digests) = kept {
                store.keep(record, partialPath: partial, in: directory, limits: limits, digests: digests)
            } else {
                PartialResourceStore.remove(partial, withRecord: hasRecord)
            }
        }
        if let mark { store.end(storeKey, mark: mark) }
        progress.cancellationHandler = nil
        return true
    }

    /// Writes the resume record every ``blocksPerSave`` blocks checked, so that a process that stops
    /// can resume what it had.
    private func saveRecordIfDue() {
        let due = state.withLock { state -> (PartialResourceRecord, String)? in
            guard limits.keepsAnything, state.checkedSinceSave >= Self.blocksPerSave, !state.finished,
                let path = state.partialPath
            else { return nil }
            state.checkedSinceSave = 0
            state.hasRecord = true
            return (record(of: state.ledger), path)
        }
        if let (record, path) = due { store.save(record, partialPath: path) }
    }

}
