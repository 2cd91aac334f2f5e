import PeerConnectivityCore
import Synchronization

/// The process's count of the memory that large messages being received hold (``LargeMessageBudget``),
/// shared by its sessions: each session is an owner with a limit of its own
/// (``Session/Configuration/largeMessageBudget``), and all of them together are held to
/// ``Session/Configuration/processLargeMessageBudget`` as each session judges it.
final class LargeMessageMemory: Sendable {
    /// The count of the process.
    static let process = LargeMessageMemory()

    /// One message's bytes in the count, given back once, however the message ends.
    final class Reservation: Sendable {
        /// The bytes counted: the size the message's OPEN announced.
        let bytes: Int
        private let owner: UInt64
        private let memory: LargeMessageMemory
        private let released = Atomic<Bool>(false)

        fileprivate init(bytes: Int, owner: UInt64, memory: LargeMessageMemory) {
            self.bytes = bytes
            self.owner = owner
            self.memory = memory
        }

        /// Gives the bytes back (the message was delivered, or dropped); only the first call counts.
        func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            memory.budget.withLock { $0.release(bytes, for: owner) }
        }

        deinit { release() }
    }

    private let budget = Mutex(LargeMessageBudget<UInt64>())
    private let lastOwner = Atomic<UInt64>(0)

    /// A number for a new owner (a session), never given before in this process.
    func newOwner() -> UInt64 {
        lastOwner.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Counts a message of `bytes` for `owner` if it fits.
    ///
    /// - Returns: its reservation, or the limit it would break.
    func reserve(
        _ bytes: Int,
        for owner: UInt64,
        within limits: LargeMessageBudget<UInt64>.Limits
    ) -> Result<Reservation, Refusal> {
        let verdict = budget.withLock { $0.reserve(bytes, for: owner, within: limits) }
        guard verdict == .admitted else { return .failure(Refusal(verdict: verdict)) }
        return .success(Reservation(bytes: bytes, owner: owner, memory: self))
    }

    /// Bytes `owner` holds now.
    func held(by owner: UInt64) -> Int { budget.withLock { $0.held(by: owner) } }

    /// Bytes all owners hold now.
    var total: Int { budget.withLock { $0.total } }

    /// Why a message was not counted: the limit it would break.
    struct Refusal: Error, CustomStringConvertible {
        /// The budget's verdict: never ``LargeMessageBudget/Verdict/admitted``.
        let verdict: LargeMessageBudget<UInt64>.Verdict

        var description: String {
            switch verdict {
            case .overOwner(let held, let limit):
                "the session gathers \(held) bytes of large messages already, at most \(limit)"
            case .overTotal(let held, let limit):
                "the process gathers \(held) bytes of large messages already, at most \(limit)"
            case .admitted:
                "admitted"
            }
        }
    }
}
