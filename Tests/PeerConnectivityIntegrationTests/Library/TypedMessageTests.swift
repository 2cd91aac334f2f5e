import Foundation
import Testing

@testable import PeerConnectivity

struct ChatLine: Codable, Sendable, Equatable {
    var text: String
}

struct Position: Codable, Sendable, Equatable {
    var x: Double
    var y: Double
}

/// Another version of `ChatLine` (the same name travels), that the current one cannot decode.
enum OldVersion {
    struct ChatLine: Codable, Sendable {
        var words: Int
    }
}

/// Typed messages: any Codable value over a session, an AsyncSequence of one type.
@Suite("Typed messages", .timeLimit(.minutes(1 * slowdown)))
struct TypedMessageTests {
    @Test("two types share a session; each sequence gets its own, with the sender; raw messages are skipped")
    @MainActor
    func twoTypes() async throws {
        let pair = try await SessionPair.connect()
        let hostPeer = pair.advertiser.peer
        var lines = pair.host.messages(of: ChatLine.self).makeAsyncIterator()  // subscribed from here on
        var positions = pair.host.messages(of: Position.self).makeAsyncIterator()
        try await pair.client.send(ChatLine(text: "hello"), toPeers: [hostPeer])
        try await pair.client.send(Data("raw".utf8), toPeers: [hostPeer])
        try await pair.client.send(Position(x: 1, y: 2), toPeers: [hostPeer], mode: .unreliable)
        try await pair.client.send(ChatLine(text: "again"), toPeers: [hostPeer])
        let first = try await lines.next()
        let second = try await lines.next()
        #expect(first?.0 == ChatLine(text: "hello") && second?.0 == ChatLine(text: "again"))
        #expect(first?.from == pair.client.peer && second?.from == pair.client.peer)
        #expect(try await positions.next()?.0 == Position(x: 1, y: 2))
        try await eventually { pair.hostLog.messages.count == 4 }
        #expect(pair.hostLog.messages.contains(Data("raw".utf8)), "a raw Data value travels unchanged")
    }

    @Test("a for-try-await loop over messages(of:), as apps write it")
    func forTryAwait() async throws {
        let pair = try await SessionPair.connect()
        let messages = pair.host.messages(of: ChatLine.self)
        let got = Locked<(ChatLine, PeerID)?>(nil)
        let reader = Task {
            for try await (line, peer) in messages {
                got.withLock { $0 = (line, peer) }
                break
            }
        }
        // The loop subscribes when it starts: send until it has one (a bounded number of times).
        for _ in 0..<200 where got.value == nil {
            try await pair.client.send(ChatLine(text: "ping"), toPeers: [pair.advertiser.peer])
            try await Task.sleep(for: .milliseconds(10))
        }
        try await reader.value
        #expect(got.value?.0 == ChatLine(text: "ping") && got.value?.1 == pair.client.peer)
    }

    @Test("a message that does not decode throws MessageDecodingError naming the peer and type; the iterator goes on")
    func undecodable() async throws {
        let pair = try await SessionPair.connect()
        let hostPeer = pair.advertiser.peer
        var iterator = pair.host.messages(of: ChatLine.self).makeAsyncIterator()
        try await pair.client.send(OldVersion.ChatLine(words: 3), toPeers: [hostPeer])
        try await pair.client.send(ChatLine(text: "after"), toPeers: [hostPeer])
        do throws(MessageDecodingError) {
            _ = try await iterator.next()
            Issue.record("the old version decoded")
        } catch {
            #expect(error == .undecodable("ChatLine", from: pair.client.peer))
            #expect(error.typeName == "ChatLine" && error.peer == pair.client.peer)
            #expect(error.detail.contains("text"), "says what is missing: \(error.detail)")
            #expect("\(error)".contains("does not decode as ChatLine"))
        }
        let next = try await iterator.next()
        #expect(next?.0 == ChatLine(text: "after"))
    }

    @Test("a typed message over the size limit throws messageTooLarge")
    func tooLarge() async throws {
        var configuration = Session.Configuration.patient
        configuration.maximumMessageLength = 1024
        let pair = try await SessionPair.connect(client: configuration)
        let error = await #expect(throws: SessionError.self) {
            try await pair.client.send(
                ChatLine(text: String(repeating: "x", count: 2000)),
                toPeers: [pair.advertiser.peer]
            )
        }
        #expect(error?.description.contains("exceeds the limit of 1024 bytes") == true, "\(String(describing: error))")
    }

    @Test("the envelope: the header names the type; text, empty, short and foreign messages are not typed ones")
    func envelope() throws {
        let data = try MessageEnvelope.encode(ChatLine(text: "hi"))
        #expect(Array(data.prefix(6)) == [0xFE, 0x50, 0x43, 0x4D, 0x01, 8])
        #expect(String(decoding: data.dropFirst(6).prefix(8), as: UTF8.self) == "ChatLine")
        let opened = try #require(MessageEnvelope.open(data))
        #expect(opened.typeName == "ChatLine")
        #expect(try JSONDecoder().decode(ChatLine.self, from: opened.body) == ChatLine(text: "hi"))
        #expect(MessageEnvelope.open(data.dropFirst(3)).map(\.typeName) == nil, "a slice that starts elsewhere")
        #expect(MessageEnvelope.open(Data(data.dropFirst(0)))?.typeName == "ChatLine", "a slice of the whole")
        for notTyped in [
            Data(), Data("hello".utf8), Data([0xFE, 0x50, 0x43, 0x4D, 0x01]),
            Data([0xFE, 0x50, 0x43, 0x4D, 0x02, 1, 0x41]),
            Data([0xFE, 0x50, 0x43, 0x4D, 0x01, 0, 0x41]), Data([0xFE, 0x50, 0x43, 0x4D, 0x01, 9, 0x41]),
        ] {
            #expect(MessageEnvelope.open(notTyped) == nil, "\(Array(notTyped))")
        }
        #expect(MessageEnvelope.typeName(of: OldVersion.ChatLine.self) == "ChatLine")
    }
}
