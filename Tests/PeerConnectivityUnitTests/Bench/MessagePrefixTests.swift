import Foundation
import Testing

@testable import PeerConnectivityBench

/// How the tools tell their control messages from payloads: `Data.begins(with:)` against `starts(with:)`.
@Suite("Message prefixes")
struct MessagePrefixTests {
    /// A message that is a prefix, one a byte short of it, one differing in its last prefix byte, and a payload.
    @Test("A prefix is found where starts(with:) finds it, and nowhere else")
    func agreesWithStartsWith() {
        let prefix = MessageFlow.prefix
        var lastDiffers = prefix
        lastDiffers[lastDiffers.endIndex - 1] ^= 0x01
        let messages: [Data] = [
            prefix, prefix + Data("{}".utf8), prefix.dropLast(), lastDiffers + Data("{}".utf8),
            Data(repeating: 0x42, count: 64), Data(),
        ]
        for message in messages {
            #expect(message.begins(with: prefix) == message.starts(with: prefix))
        }
        #expect(messages.map { $0.begins(with: prefix) } == [true, true, false, false, false, false])
    }

    /// A slice starts at its own first byte, not its storage's.
    @Test("A slice is judged by its own bytes")
    func sliceUsesItsOwnStart() {
        let whole = Data("xx".utf8) + MessageFlow.prefix + Data("{}".utf8)
        let slice = whole.dropFirst(2)
        #expect(slice.startIndex == 2)
        #expect(slice.begins(with: MessageFlow.prefix))
        #expect(!whole.begins(with: MessageFlow.prefix))
        #expect(whole.dropFirst(3).begins(with: MessageFlow.prefix.dropFirst()))
    }

    /// Every message begins with nothing.
    @Test("An empty prefix is always found")
    func emptyPrefix() {
        #expect(Data().begins(with: Data()))
        #expect(Data([1, 2]).begins(with: Data()))
    }

    /// The bytes of a message held once, asked with a prefix's bytes, answer as the message does.
    @Test("Raw bytes and a prefix's bytes answer as Data does")
    func rawBytesAgree() {
        let prefix = MessageFlow.prefix
        let bytes = [UInt8](prefix)
        for message in [prefix + Data("{}".utf8), prefix.dropLast(), Data(repeating: 0x42, count: 64), Data()] {
            #expect(message.withUnsafeBytes { $0.begins(with: bytes) } == message.begins(with: prefix))
        }
        #expect(Data("pc".utf8).withUnsafeBytes { $0.begins(with: []) })
        #expect(Data().withUnsafeBytes { $0.begins(with: []) })
        #expect(!Data("pc-bench-flox\n{}".utf8).withUnsafeBytes { $0.begins(with: bytes) })
    }
}
