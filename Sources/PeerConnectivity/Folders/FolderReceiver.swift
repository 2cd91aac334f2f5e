import Dispatch
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of a folder sent as one channel (``ChannelKind/folder``): answers its OPEN with
/// HAVE (the blocks taken by an earlier transfer of the same folder from the same sender, kept by
/// ``KeptFolders``, or nothing), and hands the blocks to a ``FolderWriter`` on a queue of its own, never
/// on the event loop. A block's length goes back to the sender's window once it is
/// checked and its files written. The application sees the folder as one resource: one `Progress` over
/// the folder stream, one event when it starts and one when it ends, with the folder's URL.
///
/// Whatever ends the transfer (END, a RESET from either side, the connection closing) ends it once:
/// `onFinish` is called exactly once, after its places are given back and the sender told. The folder's
/// files are placed in a hidden staging directory and the folder moves to its name only at END, once it is
/// whole and checked. A folder that fails with blocks taken because its link dropped, its sender failed or
/// a block was damaged is kept for a resume, staging directory and all; one cancelled, or whose stream
/// breaks a rule or a limit, is not: its staging directory and the file being written are removed.
final class FolderReceiver: IncomingResource, Sendable {
    private struct State {
        /// Nil only while ``run(_:)`` has it out, writing outside the lock.
        var writer: FolderWriter?
        var finished = false
        /// This transfer's mark in the store while it receives (``PartialResourceStore/begin(_:on:deadline:then:)``).
        var storeMark: DispatchGroup?
        /// Bytes taken and not yet given back to the sender; an eighth of the window makes a batch.
        var credit: CreditBatch
    }

    let name: String
    let peer: PeerID
    var endsAtEnd: Bool { false }
    let progress: Progress
    let size: UInt64
    private let connection: Connection
    private let channel: UInt32
    private let window: Int
    /// Which folder this is, for a resume.
    private let storeKey: PartialResourceStore.Key
    /// How long a folder cut short is kept for a resume; zero keeps none.
    private let lifetime: Duration
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
        maximumEntries: Int,
        lifetime: Duration,
        places: IncomingResourcePlaces,
        onFinish: @escaping @Sendable (Result<URL, TransferError>) -> Void
    ) {
        let writer = FolderWriter(open: open, peer: peer, directoryPath: directory.path, maximumEntries: maximumEntries)
        self.name = writer.name
        self.peer = peer
        self.size = open.size
        self.connection = connection
        self.channel = open.channel
        self.window = window
        self.lifetime = lifetime
        self.storeKey = PartialResourceStore.Key(
            directory: directory.path,
            peer: peer.id,
            name: open.name,
            size: open.size,
            isFolder: true
        )
        self.state = Mutex(State(writer: writer, credit: CreditBatch(size: window / 8)))
        self.places = places
        self.onFinish = onFinish
        self.progress = Progress.discreteProgress(totalUnitCount: Int64(clamping: open.size))
        self.queue = DispatchQueue(label: "PeerConnectivity.folder.\(open.channel)", target: connection.fileQueue)
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// Takes up the folder kept from an earlier transfer, if any (once a transfer of it still under way
    /// has ended), answers HAVE, and widens the window to ``Session/Configuration/resourceWindow`` (or to
    /// the folder's length, if that is less).
    func start() {
        queue.async { [self] in
            PartialResourceStore.shared.begin(storeKey, on: queue) { [self] mark in open(mark: mark) }
        }
    }

    /// The rest of ``start()``, on the queue. No BLOCK comes before HAVE.
    private func open(mark: DispatchGroup?) {
        let kept = lifetime > .zero ? KeptFolders.shared.claim(storeKey, peer: peer, lifetime: lifetime) : nil
        let budget = Self.budget(in: storeKey.directory)
        let answer = state.withLock { state -> (Frame.Have, taken: UInt64)? in
            state.storeMark = mark
            guard !state.finished else { return nil }
            guard var writer = kept ?? state.writer.take() else { return nil }
            writer.budget = budget
            let have = writer.have()
            state.writer = writer
            return (have, writer.taken.bytes)
        }
        guard let (have, taken) = answer else {
            // Ended before it started (cancelled): what was kept stays kept.
            if let kept { KeptFolders.shared.keep(kept, for: storeKey, lifetime: lifetime) }
            if let mark { PartialResourceStore.shared.end(storeKey, mark: mark) }
            return
        }
        answerOpen(have, resumed: taken, on: channel, of: connection, window: window, size: size)
    }

    /// The disk a folder's files may take from now: the inodes and bytes free where they land (or, while
    /// the receive directory is not made yet, in the folder that will hold it).
    private static func budget(in directory: String) -> FolderBudget {
        let parent = URL(filePath: directory).deletingLastPathComponent().path
        let bytes = Platform.freeBytes(atPath: directory) ?? Platform.freeBytes(atPath: parent)
        let inodes = Platform.freeInodes(atPath: directory) ?? Platform.freeInodes(atPath: parent)
        return FolderBudget(freeInodes: inodes, freeBytes: bytes)
    }

    // MARK: - From the connection (event loop)

    func blockStarted(_ index: Int, digest: [UInt8]) {
        queue.async { [self] in
            let restarted = run { writer in try writer.blockStarted(index, digest: digest) }
            if restarted == true {
                // The sender's folder differs from the one kept: it all crosses again.
                progress.completedUnitCount = 0
                progress.setUserInfoObject(NSNumber(value: 0), forKey: .resumedByteCountKey)
            }
        }
    }

    func received(_ bytes: ByteBuffer) {
        queue.async { [self] in
            let taken = run { writer in try writer.received(bytes) }
            guard let taken else { return }
            let grant = state.withLock { $0.credit.took(taken) }
            if grant > 0 { connection.grantCredit(grant, on: channel) }
            progress.completedUnitCount = min(progress.totalUnitCount, progress.completedUnitCount + Int64(taken))
        }
    }

    func ended(digest root: [UInt8]?) {
        queue.async { [self] in
            let url = run { writer in try writer.ended(root: root) }
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
            fail(FolderWriter.Failure(code: .cancelled, error: .cancelled(peer: peer, name: name)))
        }
    }

    // MARK: - On the queue

    /// Runs `body` on the writer unless the folder has ended; a failure ends it.
    ///
    /// The writer is taken out of the lock for it, so that its files are written and its blocks hashed
    /// outside: only this queue uses the writer, so nothing looks for it meanwhile.
    private func run<Value>(_ body: (inout FolderWriter) throws -> Value?) -> Value? {
        guard var writer = state.withLock({ $0.finished ? nil : $0.writer.take() }) else { return nil }
        let result: Result<Value?, FolderWriter.Failure>
        do {
            result = .success(try body(&writer))
        } catch let failure as FolderWriter.Failure {
            result = .failure(failure)
        } catch {
            let failure = TransferError.failed(peer: peer, name: name, detail: "\(error)")
            result = .failure(FolderWriter.Failure(code: .failed, error: failure))
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

    /// Ends the folder with `failure` and tells the sender (RESET); a damaged block keeps the blocks taken.
    private func fail(_ failure: FolderWriter.Failure) {
        guard finishOnce(keep: failure.code == .blockMismatch) else { return }
        connection.resetIncomingChannel(channel, failure.code)
        onFinish(.failure(failure.error))
    }

    /// Marks the folder finished; when `keep`, and it has taken blocks, keeps its writer for a resume,
    /// else removes the file being written. `false` if it had already finished.
    private func finishOnce(keep: Bool) -> Bool {
        let taken = state.withLock { state -> (FolderWriter?, DispatchGroup?)? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.storeMark = nil }
            return (state.writer.take(), state.storeMark)
        }
        guard let (writer, mark) = taken else { return false }
        places.giveBack()
        if var writer {
            if keep, lifetime > .zero, writer.taken.count > 0 {
                KeptFolders.shared.keep(writer, for: storeKey, lifetime: lifetime)
            } else {
                writer.abandon()
            }
        }
        if let mark { PartialResourceStore.shared.end(storeKey, mark: mark) }
        progress.cancellationHandler = nil
        return true
    }
}
