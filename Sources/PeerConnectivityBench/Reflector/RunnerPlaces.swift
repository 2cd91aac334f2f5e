import PeerConnectivityCore

/// Who holds the reflector's places, per source (an ``PeerConnectivityCore/AdmissionKey``: an IPv4 address,
/// a global IPv6 /64, a loopback or link-local address), and whom a newcomer may take one from. Pure: the
/// reflector feeds it the runners as they come and go and carries out its decisions.
///
/// - A source holds at most ``maximumPerSource`` places: one more from it is refused.
/// - Below ``maximum`` places in all, a newcomer is admitted.
/// - When every place is held, a newcomer from a source that holds **none** takes the place of the
///   longest-held runner of the source that holds the **most** (the one whose longest-held runner came first,
///   between equals), so that one address range that took every place, and keeps its runners busy enough
///   for the idle timeout not to free them, cannot lock the others out. A source that holds a single place
///   is as entitled to it as the newcomer: when no source holds two, the newcomer is refused.
struct RunnerPlaces: Sendable {
    /// What to do with a newcomer.
    enum Decision: Sendable, Hashable {
        /// Admitted into a free place.
        case admitted
        /// Admitted into the place of this runner, which must leave (already forgotten here).
        case admittedEvicting(Int)
        /// Refused, for this reason.
        case refused(String)
    }

    /// Places in all.
    let maximum: Int
    /// Places one source may hold.
    let maximumPerSource: Int
    /// The source of each runner holding a place, by runner id (ids grow: the smallest came first).
    private var holders: [Int: AdmissionKey] = [:]
    private var countBySource: [AdmissionKey: Int] = [:]

    /// No place held.
    ///
    /// - Parameters:
    ///   - maximum: places in all, at least 1.
    ///   - maximumPerSource: places one source may hold, at least 1.
    init(maximum: Int, maximumPerSource: Int) {
        self.maximum = max(1, maximum)
        self.maximumPerSource = max(1, maximumPerSource)
    }

    /// Places held.
    var count: Int { holders.count }

    /// Places held by `source`.
    ///
    /// - Parameter source: a source.
    /// - Returns: the count.
    func count(of source: AdmissionKey) -> Int { countBySource[source] ?? 0 }

    /// A runner asks for a place: admitted (taking one from another source when every place is held) or
    /// refused.
    ///
    /// - Parameters:
    ///   - id: the runner's id, larger than any before it.
    ///   - source: its source.
    /// - Returns: the decision; an admitted runner holds its place until ``left(_:)``.
    mutating func arrived(_ id: Int, from source: AdmissionKey) -> Decision {
        let held = count(of: source)
        guard held < maximumPerSource else {
            return .refused("\(maximumPerSource) runners from \(source) served already")
        }
        var decision = Decision.admitted
        if holders.count >= maximum {
            guard held == 0, let victim = longestHeldOfLargestSource() else {
                return .refused("\(maximum) runners served already")
            }
            left(victim)
            decision = .admittedEvicting(victim)
        }
        holders[id] = source
        countBySource[source, default: 0] += 1
        return decision
    }

    /// A runner left (or was evicted): its place is free. Nothing for a runner that holds none.
    ///
    /// - Parameter id: the runner's id.
    mutating func left(_ id: Int) {
        guard let source = holders.removeValue(forKey: id) else { return }
        let remaining = (countBySource[source] ?? 1) - 1
        countBySource[source] = remaining > 0 ? remaining : nil
    }

    /// The longest-held runner of the source that holds the most places, when that is more than one.
    private func longestHeldOfLargestSource() -> Int? {
        guard let most = countBySource.values.max(), most >= 2 else { return nil }
        return holders.filter { countBySource[$0.value] == most }.keys.min()
    }
}
