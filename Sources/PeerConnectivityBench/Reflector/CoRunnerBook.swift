/// Which runners a reflector served at the same time: for each runner served now, the others it has shared
/// the reflector with since it arrived, so that a runner's document can name them (the reflector tells it at
/// the end, in its ``ReflectorReport``). A runner's list holds at most ``limit`` names; the count goes on.
struct CoRunnerBook {
    /// The most names kept for one runner.
    static let limit = 1_024

    private struct Entry {
        var label: String
        var others: [String] = []
        var count = 0
    }

    private var entries: [Int: Entry] = [:]

    /// A runner arrived, named `label`: it shares the reflector with every runner served now, and they with it.
    ///
    /// - Parameters:
    ///   - id: the reflector's number for it.
    ///   - label: how the others' documents name it.
    mutating func arrived(_ id: Int, label: String) {
        var entry = Entry(label: label)
        for other in entries.keys.sorted() {
            guard var served = entries[other] else { continue }
            Self.add(label, to: &served)
            entries[other] = served
            Self.add(served.label, to: &entry)
        }
        entries[id] = entry
    }

    /// A runner left: it is no longer served, and the others keep its name.
    ///
    /// - Parameter id: the reflector's number for it.
    mutating func left(_ id: Int) {
        entries[id] = nil
    }

    /// The runners `id` has shared the reflector with so far, in the order they met, and how many in all.
    ///
    /// - Parameter id: the reflector's number for a runner served now.
    /// - Returns: the names (at most ``limit``) and the count; nothing for a runner not served.
    func others(of id: Int) -> (names: [String], count: Int) {
        guard let entry = entries[id] else { return ([], 0) }
        return (entry.others, entry.count)
    }

    private static func add(_ label: String, to entry: inout Entry) {
        entry.count += 1
        if entry.others.count < limit { entry.others.append(label) }
    }
}
