import Dispatch

/// Where the library's file work runs, all of it: the reads of blocks being sent, the writes and
/// checks of blocks received, the hashing of kept blocks, the placing of what arrived. One concurrent
/// dispatch queue for the process, off the event loops (which do the sockets) and off Swift's
/// cooperative pool (whose few threads must never block on a disk).
///
/// Work that must keep its order runs on a serial queue that targets ``queue``: each connection's
/// `fileQueue`, and each received resource's queue on that. Reads of blocks to send run on ``queue``
/// itself, several at once, from ``run(_:)``. As many run at a time as the system gives the queue
/// threads (about one per core); nothing on it may wait for other work on it.
package enum FileExecutor {
    /// The process's queue for file work.
    package static let queue = DispatchQueue(label: "PeerConnectivity.files", attributes: .concurrent)

    /// Runs `body` on ``queue`` and hands what it returns, or throws, to the awaiting task.
    ///
    /// - Parameter body: blocking file work.
    /// - Returns: what `body` returns.
    package static func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
