import Foundation
import NIOCore
import PeerConnectivityCore
import PeerConnectivityTransport
import Synchronization

/// A byte stream this side writes to one peer, made by ``Session/startStream(withName:toPeer:)``.
///
/// `write` suspends while the peer's reader has not consumed its window (its `streamWindow`, 512 KiB by default), so
/// a fast writer cannot grow memory without bound, and a stalled reader stops only its own stream.
/// The peer sees the bytes in order, in chunks of any size, and its sequence ends after ``finish()``.
///
/// ```swift
/// let stream = try session.startStream(withName: "log", toPeer: peer)
/// for line in lines { try await stream.write(Data(line.utf8)) }
/// try stream.finish()
/// ```
///
/// Releasing a stream that was neither finished nor cancelled cancels it.
public final class OutgoingStream: Sendable {
    private enum State {
        case open(writing: Bool)
        case finished
        case failed(TransferError)
    }

    /// The name the stream was opened with.
    public let name: String
    /// The peer reading it.
    public let peer: PeerID

    private let connection: Connection
    private let channel: UInt32
    private let state = Mutex(State.open(writing: false))

    init(name: String, peer: PeerID, connection: Connection, channel: UInt32) {
        self.name = name
        self.peer = peer
        self.connection = connection
        self.channel = channel
    }

    deinit {
        // Cancels an open stream; lets go of the channel's record in every case (a no-op once finished).
        connection.resetChannel(channel, .cancelled)
    }

    /// Writes bytes, in order after everything written before.
    ///
    /// Returns once the bytes are queued for the peer; suspends first while the peer's window is used up.
    /// Call it from one task at a time.
    ///
    /// - Parameter data: the bytes; any length.
    /// - Throws: ``TransferError``: the stream was cancelled (by either side, or by cancelling the
    ///   writing task, which cancels the stream), its connection closed, it is already finished, or
    ///   another `write` is in progress.
    public func write(_ data: Data) async throws {
        try await write { try await connection.sendChunks(of: data, on: channel) }
    }

    /// Writes the bytes of `buffer` as the `Data` write does, without copying them on a connection in
    /// plaintext: the socket writes them from `buffer`'s storage (the benchmark tools' pattern).
    ///
    /// - Parameter buffer: the bytes; any length.
    /// - Throws: ``TransferError``, as the `Data` write.
    package func write(_ buffer: ByteBuffer) async throws {
        try await write { try await connection.sendChunks(of: buffer, on: channel) }
    }

    private func write(sending: () async throws -> Void) async throws {
        try state.withLock { state throws(TransferError) in
            switch state {
            case .open(writing: false): state = .open(writing: true)
            case .open(writing: true):
                throw TransferError.failed(
                    peer: peer,
                    name: name,
                    detail: "another write is in progress on this stream"
                )
            case .finished: throw TransferError.alreadyFinished(peer: peer, name: name)
            case .failed(let error): throw error
            }
        }
        do {
            try await sending()
        } catch {
            let failure = transferError(for: error)
            state.withLock { $0 = .failed(failure) }
            throw failure
        }
        state.withLock { state in
            if case .open = state { state = .open(writing: false) }
        }
    }

    /// Ends the stream: the peer's sequence ends after the bytes already written.
    ///
    /// - Throws: ``TransferError`` when the stream was cancelled or its connection closed.
    public func finish() throws {
        try state.withLock { state throws(TransferError) in
            switch state {
            case .open(writing: false): state = .finished
            case .open(writing: true):
                throw TransferError.failed(peer: peer, name: name, detail: "finish called while a write is in progress")
            case .finished: return
            case .failed(let error): throw error
            }
        }
        do {
            try connection.finishChannel(channel, digest: nil)
        } catch {
            throw transferError(for: error)
        }
    }

    /// Cancels the stream: what is not yet sent is dropped, and the peer's sequence throws
    /// ``TransferError/cancelledByPeer(peer:name:)``. Does nothing once finished or failed.
    public func cancel() {
        let cancel = state.withLock { state -> Bool in
            guard case .open = state else { return false }
            state = .failed(.cancelled(peer: peer, name: name))
            return true
        }
        if cancel { connection.resetChannel(channel, .cancelled) }
    }

    private func transferError(for error: any Error) -> TransferError {
        switch error {
        case let error as ChannelClosedError: return .from(error, peer: peer, name: name)
        case let error as TransferError: return error
        case is CancellationError:
            connection.resetChannel(channel, .cancelled)
            return .cancelled(peer: peer, name: name)
        default: return .failed(peer: peer, name: name, detail: "\(error)")
        }
    }
}
