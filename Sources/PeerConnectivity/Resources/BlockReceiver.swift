import Dispatch
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of a resource or of a folder sent as one channel: the shell around a
/// ``BlockWriter`` (``FileWriter`` or ``FolderWriter``) that knows the files.
///
/// It answers OPEN with the blocks held already (HAVE, from the writer), widens the window, and hands
/// every frame of the channel to the writer on a serial queue of its own, never on the event loop. That
/// queue runs on the connection's ``Connection/fileQueue``, so the files of one connection are written
/// by one thread at a time and a folder's small files run back to back: nothing here may wait for other
/// work there. The writer is taken out of the lock while it works, so files are written and blocks
/// hashed outside it; only this queue uses the writer. A block's length goes back to the sender's window
/// once the writer has written and checked it, so at most the window waits in memory. The application
/// sees one `Progress` and, at the end, one URL.
///
/// Whatever ends the transfer (END, a failure the writer throws, a RESET from either side, the
/// connection closing) ends it once: `onFinish` is called exactly once, after its places are given back
/// and the sender told. A transfer that fails with blocks checked because its link dropped, its sender
/// failed or a block was damaged keeps them for the sender to resume (``BlockWriteFailure/keep``); one
/// cancelled from either side keeps nothing.
final class BlockReceiver<Writer: BlockWriter>: IncomingResource, Sendable {
    private struct State {
        /// Nil only while ``run(_:)`` has it out, working outside the lock, and once finished.
        var writer: Writer?
        var finished = false
        /// This transfer's mark in the store while it receives (``PartialResourceStore/begin(_:on:deadline:then:)``).
        var storeMark: DispatchGroup?
        /// Bytes checked and not yet given back to the sender; an eighth of the window makes a batch.
        var credit: CreditBatch
    }

    let name: String
    let peer: PeerID
    var endsAtEnd: Bool { false }
    let progress: Progress
    private let size: UInt64
    private let connection: Connection
    private let channel: UInt32
    private let window: Int
    private let storeKey: PartialResourceStore.Key
    private let queue: DispatchQueue
    private let state: Mutex<State>
    private let places: IncomingResourcePlaces
    private let onFinish: @Sendable (Result<URL, TransferError>) -> Void

    /// A receiver for the channel OPEN announced, writing with `writer`.
    ///
    /// - Parameter window: the bytes the sender may have in flight once HAVE is answered (or the
    ///   resource's length, if that is less).
    init(
        open: Frame.Open,
        writer: Writer,
        peer: PeerID,
        connection: Connection,
        window: Int,
        places: IncomingResourcePlaces,
        onFinish: @escaping @Sendable (Result<URL, TransferError>) -> Void
    ) {
        self.name = writer.name
        self.peer = peer
        self.size = open.size
        self.connection = connection
        self.channel = open.channel
        self.window = window
        self.storeKey = writer.storeKey
        self.state = Mutex(State(writer: writer, credit: CreditBatch(size: window / 8)))
        self.places = places
        self.onFinish = onFinish
        // No parent: the event loop never has a current `Progress`, and asking for it costs a thread-local lookup.
        self.progress = Progress.discreteProgress(totalUnitCount: Int64(clamping: open.size))
        self.queue = DispatchQueue(label: "PeerConnectivity.resource.\(open.channel)", target: connection.fileQueue)
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// Opens the writer (taking up what an earlier transfer kept, once a transfer of the same resource
    /// still under way has ended), answers HAVE, and widens the window.
    func start() {
        queue.async { [self] in
            // A resource resumed at once on a new connection may arrive before the transfer on the old
            // one has kept its blocks: the store goes on once it has, without holding the queue (which
            // other resources of the connection share).
            PartialResourceStore.shared.begin(storeKey, on: queue) { [self] mark in open(mark: mark) }
        }
    }

    /// The rest of ``start()``, on the queue, with the store's mark. No BLOCK comes before HAVE.
    private func open(mark: DispatchGroup?) {
        let started = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.storeMark = mark
            return true
        }
        guard started else {
            // Ended before it started (cancelled): nothing was opened, and what an earlier transfer
            // kept stays kept.
            if let mark { PartialResourceStore.shared.end(storeKey, mark: mark) }
            return
        }
        guard let (have, resumed) = run({ writer throws(BlockWriteFailure) in try writer.open() }) else { return }
        if resumed > 0 {
            progress.completedUnitCount = Int64(clamping: resumed)
            progress.setUserInfoObject(NSNumber(value: resumed), forKey: .resumedByteCountKey)
        }
        connection.sendControl(.have(channel: channel, have))
        // A file within the first window (a folder's small file sent alone) costs no CREDIT frame, nor
        // the wake of the event loop that sends it.
        let widening = min(window, Int(clamping: size)) - WireProtocol.initialChannelWindow
        if widening > 0 { connection.grantCredit(widening, on: channel) }
    }

    // MARK: - From the connection (event loop)

    func blockStarted(_ index: Int, digest: [UInt8]) {
        queue.async { [self] in
            let recounted = run { writer throws(BlockWriteFailure) in try writer.blockStarted(index, digest: digest) }
            // The sender did not take the blocks offered (its file differs): they cross again, and
            // count again as they do.
            guard let recounted, recounted > 0 else { return }
            let taken = Int64(clamping: recounted)
            progress.completedUnitCount = max(0, progress.completedUnitCount - taken)
            let resumed = (progress.userInfo[.resumedByteCountKey] as? NSNumber)?.int64Value ?? 0
            progress.setUserInfoObject(NSNumber(value: max(0, resumed - taken)), forKey: .resumedByteCountKey)
        }
    }

    func received(_ bytes: ByteBuffer) {
        queue.async { [self] in
            guard let (progressed, checked) = run({ writer throws(BlockWriteFailure) in try writer.received(bytes) })
            else { return }
            if checked > 0 {
                let grant = state.withLock { $0.credit.took(checked) }
                if grant > 0 { connection.grantCredit(grant, on: channel) }
            }
            if progressed > 0 {
                progress.completedUnitCount = min(
                    progress.totalUnitCount,
                    progress.completedUnitCount + Int64(progressed)
                )
            }
        }
    }

    func ended(digest root: [UInt8]?) {
        // Every chunk that came before END has been handed to the writer on the queue by then.
        queue.async { [self] in
            let url = run { writer throws(BlockWriteFailure) in try writer.ended(root: root) }
            guard let url, finishOnce(keep: false) else { return }
            connection.sendControl(.done(channel: channel))
            onFinish(.success(url))
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
            fail(BlockWriteFailure(code: .cancelled, error: .cancelled(peer: peer, name: name), keep: false))
        }
    }

    // MARK: - On the queue

    /// Runs `body` on the writer unless the transfer has ended; a failure ends it.
    private func run<Value>(_ body: (inout Writer) throws(BlockWriteFailure) -> Value) -> Value? {
        guard var writer = state.withLock({ $0.finished ? nil : $0.writer.take() }) else { return nil }
        let result: Result<Value, BlockWriteFailure>
        do {
            result = .success(try body(&writer))
        } catch {
            result = .failure(error)
        }
        state.withLock { $0.writer = writer }
        switch result {
        case .success(let value):
            return value
        case .failure(let failure):
            fail(failure)
            return nil
        }
    }

    /// Ends the transfer with `failure` and tells the sender (RESET).
    private func fail(_ failure: BlockWriteFailure) {
        guard finishOnce(keep: failure.keep) else { return }
        connection.resetIncomingChannel(channel, failure.code)
        onFinish(.failure(failure.error))
    }

    /// Marks the transfer finished, gives its places back and lets the writer close, keep or remove what
    /// it wrote. `false` if it had already finished.
    private func finishOnce(keep: Bool) -> Bool {
        let taken = state.withLock { state -> (Writer?, DispatchGroup?)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.storeMark = nil }
            return (state.writer.take(), state.storeMark)
        }
        guard let (writer, mark) = taken else { return false }
        places.giveBack()
        if var writer { writer.finish(keep: keep) }
        if let mark { PartialResourceStore.shared.end(storeKey, mark: mark) }
        progress.cancellationHandler = nil
        return true
    }
}
