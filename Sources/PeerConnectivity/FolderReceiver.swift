import Dispatch
import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of a folder sent as one channel (``ChannelKind/folder``): answers its OPEN with
/// HAVE (nothing: a folder is not resumed), and hands the blocks to a ``FolderWriter`` on a queue of
/// its own, never on the event loop. A block's length goes back to the sender's window once it is
/// checked and its files written. The application sees the folder as one resource: one `Progress` over
/// the folder stream, one event when it starts and one when it ends, with the folder's URL.
///
/// Whatever ends the transfer (END, a RESET from either side, the connection closing) ends it once:
/// `onFinish` is called exactly once. Files placed before a failure stay; the file being written is removed.
final class FolderReceiver: IncomingResource, Sendable {
    private struct State {
        var writer: FolderWriter
        var finished = false
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
    private let queue: DispatchQueue
    private let state: Mutex<State>
    private let onFinish: @Sendable (Result<URL, TransferError>) -> Void

    init(
        open: Frame.Open,
        peer: PeerID,
        connection: Connection,
        directory: URL,
        window: Int,
        maximumEntries: Int,
        onFinish: @escaping @Sendable (Result<URL, TransferError>) -> Void
    ) {
        let writer = FolderWriter(open: open, peer: peer, directoryPath: directory.path, maximumEntries: maximumEntries)
        self.name = writer.name
        self.peer = peer
        self.size = open.size
        self.connection = connection
        self.channel = open.channel
        self.window = window
        self.state = Mutex(State(writer: writer, credit: CreditBatch(size: window / 8)))
        self.onFinish = onFinish
        self.progress = Progress.discreteProgress(totalUnitCount: Int64(clamping: open.size))
        self.queue = DispatchQueue(label: "PeerConnectivity.folder.\(open.channel)", target: connection.fileQueue)
        progress.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// Answers HAVE and widens the window to ``Session/Configuration/resourceWindow`` (or to the folder's
    /// length, if that is less).
    func start() {
        connection.sendControl(.have(channel: channel, .nothing))
        let widening = min(window, Int(clamping: size)) - WireProtocol.initialChannelWindow
        if widening > 0 { connection.grantCredit(widening, on: channel) }
    }

    // MARK: - From the connection (event loop)

    func blockStarted(_ index: Int, digest: [UInt8]) {
        queue.async { [self] in
            run { writer in
                try writer.blockStarted(index, digest: digest)
                return nil
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
            guard let url, finishOnce() else { return }
            connection.sendControl(.done(channel: channel))
            onFinish(.success(url))
        }
    }

    func failed(_ error: TransferError) {
        queue.async { [self] in
            guard finishOnce() else { return }
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
    private func run<Value>(_ body: (inout FolderWriter) throws -> Value?) -> Value? {
        let result = state.withLock { state -> Result<Value?, FolderWriter.Failure> in
            guard !state.finished else { return .success(nil) }
            do {
                return .success(try body(&state.writer))
            } catch let failure as FolderWriter.Failure {
                return .failure(failure)
            } catch {
                let failure = TransferError.failed(peer: peer, name: name, detail: "\(error)")
                return .failure(FolderWriter.Failure(code: .failed, error: failure))
            }
        }
        switch result {
        case .success(let value):
            return value
        case .failure(let failure):
            fail(failure)
            return nil
        }
    }

    /// Ends the folder with `failure` and tells the sender (RESET).
    private func fail(_ failure: FolderWriter.Failure) {
        guard finishOnce() else { return }
        connection.resetInboundChannel(channel, failure.code)
        onFinish(.failure(failure.error))
    }

    /// Marks the folder finished and removes the file being written; `false` if it had already finished.
    private func finishOnce() -> Bool {
        let first = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.finished = true
            state.writer.abandon()
            return true
        }
        if first { progress.cancellationHandler = nil }
        return first
    }
}
