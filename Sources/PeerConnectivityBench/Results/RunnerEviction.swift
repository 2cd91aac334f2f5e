import Foundation

/// What the reflector tells a runner whose place it gives to a newcomer, just before it disconnects it:
/// the runner's failure then says it was evicted, and why (``ReflectorConfiguration/maximumRunnersPerAddress``).
public struct RunnerEviction: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON.
    public static let prefix = Data("pc-bench-evicted\n".utf8)

    /// The message's format version.
    public var schemaVersion: Int
    /// Why: the source that held the most places, and the newcomer's.
    public var detail: String

    /// Makes a notice.
    ///
    /// - Parameter detail: why the runner was evicted.
    public init(detail: String) {
        schemaVersion = 1
        self.detail = detail
    }

    /// The runner's failure: it was evicted for a newcomer.
    var failure: BenchError {
        .disconnected("the reflector evicted this runner for a newcomer (\(detail)); try again later")
    }
}
