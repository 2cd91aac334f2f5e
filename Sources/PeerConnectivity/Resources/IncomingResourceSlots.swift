import PeerConnectivityTransport
import Synchronization

/// Places for incoming resources, each of which holds a file open: a session takes one per resource
/// up to its own limit, and every session of the process draws on one shared count, so that peers
/// together cannot use up the process's file descriptors.
final class IncomingResourceSlots: Sendable {
    /// The count shared by all sessions of the process.
    static let process = IncomingResourceSlots(limit: processLimit)

    /// A quarter of the process's soft limit on open descriptors when it is first asked (at least 16):
    /// the rest stay for sockets and the application.
    static var processLimit: Int {
        guard let limit = Platform.fileDescriptorLimit else { return 256 }
        return max(16, limit / 4)
    }

    /// How many may be taken at once.
    let limit: Int
    private let taken = Atomic<Int>(0)

    /// - Parameter limit: how many may be taken at once.
    init(limit: Int) {
        self.limit = limit
    }

    /// Takes a place if one is free.
    ///
    /// - Returns: whether one was taken (then ``give()`` returns it).
    func take() -> Bool {
        var current = taken.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = taken.compareExchange(
                expected: current,
                desired: current + 1,
                ordering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Returns a place taken with ``take()``.
    func give() {
        taken.subtract(1, ordering: .relaxed)
    }

    /// Places taken now.
    var count: Int { taken.load(ordering: .relaxed) }
}
