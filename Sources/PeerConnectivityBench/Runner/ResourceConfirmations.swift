/// The reflector's resource confirmations, matched to the transfers waiting for them by name.
actor ResourceConfirmations {
    private var arrived: [String: (confirmation: ResourceConfirmation, at: UInt64)] = [:]
    private var waiters: [String: CheckedContinuation<(confirmation: ResourceConfirmation, at: UInt64)?, Never>] = [:]
    private var abandoned: Set<String> = []
    private var ended: String?

    /// Takes in a confirmation that arrived at `at` (monotonic nanoseconds).
    func deliver(_ confirmation: ResourceConfirmation, at: UInt64) {
        if let waiter = waiters.removeValue(forKey: confirmation.name) {
            waiter.resume(returning: (confirmation, at))
        } else if !abandoned.contains(confirmation.name), arrived.count < 1_024 {
            arrived[confirmation.name] = (confirmation, at)
        }
    }

    /// No more confirmations will come (the reflector left): every waiter gets nil.
    func end(_ why: String) {
        ended = why
        for waiter in waiters.values { waiter.resume(returning: nil) }
        waiters = [:]
    }

    /// Why no more confirmations will come, if so.
    var endReason: String? { ended }

    /// The confirmation of `name`, waiting for it; nil once abandoned or ended.
    func take(_ name: String) async -> (confirmation: ResourceConfirmation, at: UInt64)? {
        if let confirmation = arrived.removeValue(forKey: name) { return confirmation }
        if ended != nil || abandoned.contains(name) { return nil }
        return await withCheckedContinuation { waiters[name] = $0 }
    }

    /// Gives up on `name` (its time ran out): its waiter gets nil.
    func abandon(_ name: String) {
        abandoned.insert(name)
        waiters.removeValue(forKey: name)?.resume(returning: nil)
    }

    /// Whether `name` was given up on.
    func wasAbandoned(_ name: String) -> Bool {
        abandoned.contains(name)
    }
}
