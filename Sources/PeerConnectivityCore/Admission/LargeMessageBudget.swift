/// The memory that large messages being received may hold: each message channel a peer opens is gathered
/// into one buffer of the size its OPEN announces, which stays until the message is delivered at its END
/// or dropped; this is what a few peers could otherwise make a receiver hold, by opening messages and never
/// finishing them.
///
/// Each owner (a session) may hold up to ``Limits/perOwner`` bytes, and all owners together (the process)
/// up to ``Limits/total``; a message is counted whole, at the size its OPEN announced, from its OPEN to its
/// END or its end. A message that would take either count over its limit is refused (the receiver answers
/// RESET 8, busy: the sender may try again once others have ended). Pure: the shell keeps one for the
/// process under a lock and releases each message's bytes exactly once.
package struct LargeMessageBudget<Owner: Hashable & Sendable>: Sendable {
    /// How many bytes may be held.
    package struct Limits: Sendable, Hashable {
        /// Bytes one owner may hold.
        package var perOwner: Int
        /// Bytes all owners together may hold.
        package var total: Int

        /// Makes limits that hold at least one message of `largestMessage` bytes each, so that no message
        /// the owner accepts is refused for ever, whatever the limits asked for.
        ///
        /// - Parameters:
        ///   - perOwner: bytes one owner may hold.
        ///   - total: bytes all owners together may hold.
        ///   - largestMessage: the largest message the owner accepts.
        package init(perOwner: Int, total: Int, largestMessage: Int) {
            self.perOwner = max(perOwner, largestMessage)
            self.total = max(total, largestMessage)
        }
    }

    /// Whether a message is taken.
    package enum Verdict: Sendable, Hashable {
        /// It fits: its bytes are counted until ``LargeMessageBudget/release(_:for:)``.
        case admitted
        /// The owner holds `held` bytes already; with the message it would be over `limit`.
        case overOwner(held: Int, limit: Int)
        /// All owners hold `held` bytes already; with the message they would be over `limit`.
        case overTotal(held: Int, limit: Int)
    }

    private var held: [Owner: Int] = [:]
    /// Bytes all owners hold.
    package private(set) var total = 0

    /// Makes an empty budget.
    package init() {}

    /// Bytes `owner` holds.
    ///
    /// - Parameter owner: an owner.
    /// - Returns: its bytes; 0 for an owner that holds none.
    package func held(by owner: Owner) -> Int { held[owner] ?? 0 }

    /// How many owners hold bytes.
    package var owners: Int { held.count }

    /// Counts a message of `bytes` for `owner` if it fits both limits.
    ///
    /// - Parameters:
    ///   - bytes: the message's announced size.
    ///   - owner: who gathers it.
    ///   - limits: the limits to judge it by.
    /// - Returns: ``Verdict/admitted``, or which limit it would break (then nothing is counted).
    package mutating func reserve(_ bytes: Int, for owner: Owner, within limits: Limits) -> Verdict {
        let mine = held(by: owner)
        guard bytes <= limits.perOwner - mine else { return .overOwner(held: mine, limit: limits.perOwner) }
        guard bytes <= limits.total - total else { return .overTotal(held: total, limit: limits.total) }
        held[owner] = mine + bytes
        total += bytes
        return .admitted
    }

    /// Stops counting a message admitted by ``reserve(_:for:within:)``: delivered, or dropped.
    ///
    /// - Parameters:
    ///   - bytes: the size it was admitted with.
    ///   - owner: its owner.
    package mutating func release(_ bytes: Int, for owner: Owner) {
        let mine = held(by: owner)
        precondition(bytes <= mine, "released \(bytes) bytes of \(mine) held")
        held[owner] = mine == bytes ? nil : mine - bytes
        total -= bytes
    }
}
