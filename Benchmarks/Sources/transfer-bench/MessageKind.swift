import Foundation
import PeerConnectivityBench

/// The first byte of every message between `transfer-bench run` and its `serve` child; what follows
/// it is JSON for the kinds that carry a value.
enum MessageKind: UInt8 {
    /// Parent to child: send this message back unchanged.
    case echo = 0x45
    /// Parent to child: reset the peak resident set, then answer with a ``sample``.
    case resetPeak = 0x50
    /// Parent to child: answer with a ``sample``. Child to parent: a ``ProcessSample``.
    case sample = 0x53
    /// Child to parent: a stream or a resource has ended; a ``TransferReport``.
    case transferEnded = 0x46

    /// A message of this kind carrying `value` as JSON.
    func message(_ value: some Encodable) throws -> Data {
        var data = Data([rawValue])
        data.append(try JSONEncoder().encode(value))
        return data
    }

    /// A message of this kind with nothing after the kind.
    var message: Data { Data([rawValue]) }

    /// Decodes the JSON after the kind byte of `message`.
    static func value<T: Decodable>(_ type: T.Type, in message: Data) throws -> T {
        try JSONDecoder().decode(type, from: message.dropFirst())
    }
}
