import Foundation

/// A byte stream a peer writes to this side, delivered by ``SessionEvent/streamReceived(_:)``:
/// an `AsyncSequence` of chunks, in order, that ends when the writer finishes.
///
/// ```swift
/// case .streamReceived(let stream):
///     for try await chunk in stream { file.write(chunk) }
/// ```
///
/// Reading is what lets the writer go on: each chunk read gives its length back to the writer's
/// window. Iteration throws ``TransferError`` when the writer cancels, the connection closes, or
/// the reading task is cancelled (which cancels the stream for the writer too). Read it from one
/// task. Releasing every copy of a stream that has not ended cancels it.
public struct IncomingStream: AsyncSequence, Sendable {
    /// Each element is a chunk of bytes, at most 64 KiB.
    public typealias Element = Data

    /// The name the writer gave the stream (as sent: untrusted).
    public var name: String { receiver.name }
    /// The peer writing it.
    public var peer: PeerID { receiver.peer }

    private let lifetime: Lifetime
    private var receiver: StreamReceiver { lifetime.receiver }

    init(receiver: StreamReceiver) {
        self.lifetime = Lifetime(receiver: receiver)
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(lifetime: lifetime)
    }

    /// Stops reading: the writer's next `write` throws ``TransferError/cancelledByPeer(peer:name:)``.
    public func cancel() {
        receiver.cancel()
    }

    /// Iterates the chunks of a stream.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let lifetime: Lifetime

        /// The next chunk, or `nil` once the writer has finished.
        ///
        /// - Throws: ``TransferError`` when the stream failed.
        public mutating func next() async throws -> Data? {
            try await lifetime.receiver.next()
        }
    }

    /// Cancels the stream when the last copy of it goes away.
    fileprivate final class Lifetime: Sendable {
        let receiver: StreamReceiver

        init(receiver: StreamReceiver) {
            self.receiver = receiver
        }

        deinit {
            receiver.cancel()
        }
    }
}
