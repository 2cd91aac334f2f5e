import Foundation
import NIOCore
import NIOFoundationCompat
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// The receiving end of one stream: the chunks that arrived and were not yet read, and the credit
/// that reading gives back to the writer. The session's connection delegate fills it on the event
/// loop; ``IncomingStream`` reads it.
///
/// At most the channel's window waits here, because the writer may send only what was credited.
final class StreamReceiver: IncomingTransfer, Sendable {
    private enum End {
        case open
        case finished
        case failed(TransferError)
    }

    private struct State {
        var chunks = CircularBuffer<ByteBuffer>()
        var waiter: CheckedContinuation<ByteBuffer?, any Error>?
        /// A wake-up of `waiter` is queued on the event loop.
        var wakeScheduled = false
        var end = End.open
        /// Bytes read and not yet given back to the writer; a quarter of the window makes a batch,
        /// so the writer always has room while the CREDIT travels.
        var credit: CreditBatch
    }

    let name: String
    let peer: PeerID
    var endsAtEnd: Bool { true }
    private let connection: Connection
    private let channel: UInt32
    private let state: Mutex<State>

    /// Makes the receiving end and widens the channel's window to `window` bytes.
    init(name: String, peer: PeerID, connection: Connection, channel: UInt32, window: Int) {
        self.name = name
        self.peer = peer
        self.connection = connection
        self.channel = channel
        self.state = Mutex(State(credit: CreditBatch(size: window / 4)))
        if window > WireProtocol.initialChannelWindow {
            connection.grantCredit(window - WireProtocol.initialChannelWindow, on: channel)
        }
    }

    /// Counts `count` bytes as read; gives credit back once a batch has been read.
    private func read(_ count: Int) {
        let grant = state.withLock { $0.credit.took(count) }
        if grant > 0 { connection.grantCredit(grant, on: channel) }
    }

    // MARK: - From the connection (event loop)

    func received(_ bytes: ByteBuffer) {
        let scheduleWake = state.withLock { state -> Bool in
            guard case .open = state.end else { return false }
            state.chunks.append(bytes)
            guard state.waiter != nil, !state.wakeScheduled else { return false }
            state.wakeScheduled = true
            return true
        }
        // The waiting reader is woken once the rest of this read is decoded, not per chunk: a read
        // brings several chunks, and each wake-up of a reader elsewhere is a thread switch.
        if scheduleWake {
            connection.eventLoop.execute { self.wakeReader() }
        }
    }

    /// Hands the waiting reader the first queued chunk (see ``received(_:)``).
    private func wakeReader() {
        let handOff = state.withLock { state -> (CheckedContinuation<ByteBuffer?, any Error>, ByteBuffer)? in
            state.wakeScheduled = false
            guard let waiter = state.waiter, let chunk = state.chunks.popFirst() else { return nil }
            state.waiter = nil
            return (waiter, chunk)
        }
        guard let (waiter, chunk) = handOff else { return }
        read(chunk.readableBytes)
        waiter.resume(returning: chunk)
    }

    func ended(digest: [UInt8]?) {
        end(.finished)
    }

    func failed(_ error: TransferError) {
        end(.failed(error))
    }

    private func end(_ end: End) {
        let waiter = state.withLock { state -> CheckedContinuation<ByteBuffer?, any Error>? in
            guard case .open = state.end else { return nil }
            state.end = end
            // Chunks still queued go first: the scheduled wake-up hands the reader one of them.
            guard state.chunks.isEmpty else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        switch end {
        case .failed(let error): waiter?.resume(throwing: error)
        default: waiter?.resume(returning: nil)
        }
    }

    // MARK: - From the reader

    /// The next chunk, `nil` once the writer finished; throws when the stream failed.
    func next() async throws -> Data? {
        let bytes = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                let immediate = state.withLock { state -> Result<ByteBuffer?, any Error>? in
                    if let chunk = state.chunks.popFirst() { return .success(chunk) }
                    switch state.end {
                    case .finished: return .success(nil)
                    case .failed(let error): return .failure(error)
                    case .open:
                        if Task.isCancelled { return .failure(TransferError.cancelled(peer: peer, name: name)) }
                        state.waiter = continuation
                        return nil
                    }
                }
                if let immediate {
                    if case .success(let chunk?) = immediate {
                        read(chunk.readableBytes)
                    }
                    continuation.resume(with: immediate)
                }
            }
        } onCancel: {
            cancel()
        }
        // No copy: the chunk keeps its read buffer alive until the reader lets go of it; at most the
        // window is outstanding, so that is bounded.
        return bytes.map { Data(buffer: $0, byteTransferStrategy: .noCopy) }
    }

    /// The reader gives up: the writer gets a cancelled error, the reader ``TransferError/cancelled(peer:name:)``.
    func cancel() {
        let wasOpen = state.withLock { state -> Bool in
            guard case .open = state.end else { return false }
            state.chunks.removeAll()
            return true
        }
        guard wasOpen else { return }
        end(.failed(.cancelled(peer: peer, name: name)))
        connection.resetIncomingChannel(channel, .cancelled)
    }
}
