import Foundation

/// The bulk test with `--size`: a runner's word that the messages it sends from now on are to be counted
/// and checked, not echoed (`start`), and that they are over (`end`); the reflector answers `end` with a
/// ``StreamReceipt`` named ``receiptName`` (bytes read; the first wrong byte's offset in a message if any).
public struct MessageFlow: PrefixedMessage, Hashable, Sendable {
    /// The bytes before the JSON.
    public static let prefix = Data("pc-bench-flow\n".utf8)
    /// The receipt's name.
    public static let receiptName = "bench-messages"

    /// The action that starts datagrams at a bitrate (`--test bulk -u`), counted by a
    /// ``DatagramReceiver`` and answered at "end" with a ``DatagramReceipt``.
    public static let startDatagrams = "start-udp"

    /// "start", ``startDatagrams`` or "end".
    public var action: String
    /// The messages' size in bytes.
    public var size: Int

    /// A start of one-way messages of `size` bytes.
    public static func start(size: Int) -> MessageFlow { MessageFlow(action: "start", size: size) }
    /// Their end.
    public static func end(size: Int) -> MessageFlow { MessageFlow(action: "end", size: size) }
}
