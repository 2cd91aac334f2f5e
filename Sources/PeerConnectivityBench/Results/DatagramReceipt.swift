import Foundation

/// The reflector's answer at the end of datagrams at a bitrate (`--test bulk -u`): what its
/// ``DatagramReceiver`` counted.
public struct DatagramReceipt: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON.
    public static let prefix = Data("pc-bench-udp-receipt\n".utf8)

    /// Datagrams received, duplicates among them.
    public var received: Int
    /// Datagrams received once each.
    public var unique: Int
    /// The bytes received.
    public var bytes: Int
    /// Datagrams received again.
    public var duplicates: Int
    /// Datagrams that came after a later one.
    public var outOfOrder: Int
    /// RFC 3550's interarrival jitter, in nanoseconds.
    public var jitterNanoseconds: Double
    /// Bytes received in each second from the first arrival.
    public var bytesPerSecond: [Int]

    /// The receipt of what `receiver` counted.
    ///
    /// - Parameter receiver: the reflector's count.
    public init(_ receiver: DatagramReceiver) {
        received = receiver.received
        unique = receiver.unique
        bytes = receiver.bytes
        duplicates = receiver.duplicates
        outOfOrder = receiver.outOfOrder
        jitterNanoseconds = receiver.jitterNanoseconds
        bytesPerSecond = receiver.seconds.map(\.bytes)
    }
}
