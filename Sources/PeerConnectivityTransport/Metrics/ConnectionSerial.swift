import Synchronization

/// Numbers the connections of the process, 1, 2, 3...: the `connection` metadata of their logs.
package enum ConnectionSerial {
    private static let last = Atomic<UInt64>(0)

    /// The next connection's number.
    ///
    /// - Returns: a number no connection of this process had before.
    package static func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
