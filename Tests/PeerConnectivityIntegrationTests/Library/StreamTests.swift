import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Streams between two sessions over real loopback sockets, without DNS-SD.
@Suite("Streams", .timeLimit(.minutes(1 * slowdown)))
struct StreamTests {
    /// Reads a stream to its end.
    private func readAll(_ stream: IncomingStream) async throws -> Data {
        var received = Data()
        for try await chunk in stream {
            received.append(chunk)
        }
        return received
    }

    @Test("a stream's bytes arrive in order, byte for byte, whatever the sizes of the writes")
    func content() async throws {
        let pair = try await SessionPair.connect()
        let content = pattern(count: 8 << 20, seed: 1)
        let stream = try pair.client.startStream(withName: "big stream", toPeer: pair.host.peer)
        let writer = Task {
            var random = SystemRandomNumberGenerator()
            var offset = 0
            while offset < content.count {
                let length = min(Int.random(in: 1...200_000, using: &random), content.count - offset)
                try await stream.write(content[offset..<offset + length])
                offset += length
            }
            try stream.finish()
        }
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        #expect(incoming.name == "big stream")
        #expect(incoming.peer == pair.client.peer)
        let received = try await readAll(incoming)
        try await writer.value
        #expect(received.count == content.count)
        #expect(received == content)
    }

    @Test("64 streams at once each deliver their own bytes; one stalled reader holds up neither them nor messages")
    func concurrentStreamsAndStalledReader() async throws {
        let pair = try await SessionPair.connect()
        let peer = pair.host.peer
        // Stream 0 is never read: its writer must stop at the window, and nothing else may wait for it.
        let stalled = try pair.client.startStream(withName: "stalled", toPeer: peer)
        let stalledDone = Locked(false)
        let stalledWriter = Task {
            try await stalled.write(pattern(count: 4 << 20, seed: 99))
            stalledDone.withLock { $0 = true }
        }
        let count = 64
        let size = 256 << 10
        let writers = try (0..<count).map { index in
            let stream = try pair.client.startStream(withName: "s\(index)", toPeer: peer)
            return Task {
                try await stream.write(pattern(count: size, seed: UInt64(index)))
                try stream.finish()
            }
        }
        let streams = try await pair.hostLog.waitForStreams(count + 1)
        #expect(streams.first?.name == "stalled")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for stream in streams.dropFirst() {
                group.addTask {
                    let index = try #require(Int(stream.name.dropFirst()))
                    let received = try await readAll(stream)
                    #expect(received == pattern(count: size, seed: UInt64(index)), "stream \(stream.name)")
                }
            }
            try await group.waitForAll()
        }
        for writer in writers { try await writer.value }
        // Messages pass while the stalled stream's writer waits for a window that never comes.
        for index in 0..<100 {
            try await pair.client.send(Data("message \(index)".utf8), toPeers: [peer])
        }
        let deadline = ContinuousClock.now + waitLimit
        while pair.hostLog.messages.count < 100, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pair.hostLog.messages.count == 100)
        #expect(pair.hostLog.messages.last == Data("message 99".utf8))
        #expect(!stalledDone.withLock { $0 }, "4 MiB cannot have gone through a window that is never read")
        // The stalled writer is still suspended; the reader starts and everything arrives.
        let stalledStream = streams[0]
        let reader = Task { try await readAll(stalledStream) }
        try await stalledWriter.value
        try stalled.finish()
        #expect(try await reader.value == pattern(count: 4 << 20, seed: 99))
    }

    @Test("a writer cannot get further ahead of its reader than the window and its queue")
    func backpressure() async throws {
        let pair = try await SessionPair.connect()
        let stream = try pair.client.startStream(withName: "slow", toPeer: pair.host.peer)
        let written = Locked(0)
        let writer = Task {
            for _ in 0..<64 {
                try await stream.write(Data(count: 64 << 10))
                written.withLock { $0 += 64 << 10 }
            }
            try stream.finish()
        }
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        // The writer fills the window (within 300 ms alone, seconds on a loaded machine), then 300 ms more to go
        // further if it could.
        let window = pair.host.configuration.streamWindow
        try await eventually { written.withLock { $0 } >= window }
        try await Task.sleep(for: .milliseconds(300))
        let ahead = written.withLock { $0 }
        // The reader's window + the writer's queue (512 KiB) + one chunk in hand.
        #expect(
            ahead <= window + (512 + 64) << 10,
            "the writer got \(ahead) bytes ahead of a reader that reads nothing"
        )
        let received = try await readAll(incoming)
        try await writer.value
        #expect(received.count == 4 << 20)
    }

    @Test("the writer cancels: the reader's iteration throws cancelledByPeer promptly")
    func writerCancels() async throws {
        let pair = try await SessionPair.connect()
        let stream = try pair.client.startStream(withName: "doomed", toPeer: pair.host.peer)
        try await stream.write(Data(count: 1000))
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        var iterator = incoming.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1000)
        let start = ContinuousClock.now
        stream.cancel()
        await #expect(throws: TransferError.cancelledByPeer(peer: pair.client.peer, name: "doomed")) {
            _ = try await iterator.next()
        }
        #expect(ContinuousClock.now - start < promptly)
        await #expect(throws: TransferError.cancelled(peer: pair.host.peer, name: "doomed")) {
            try await stream.write(Data(count: 1))
        }
        #expect(pair.client.connectedPeers == [pair.host.peer], "a cancelled stream leaves the connection up")
    }

    @Test("the reader cancels: the writer's next write throws cancelledByPeer promptly")
    func readerCancels() async throws {
        let pair = try await SessionPair.connect()
        let stream = try pair.client.startStream(withName: "unwanted", toPeer: pair.host.peer)
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        let start = ContinuousClock.now
        incoming.cancel()
        let error = await #expect(throws: TransferError.self) {
            for _ in 0..<10_000 {
                try await stream.write(Data(count: 64 << 10))
            }
        }
        #expect(error == .cancelledByPeer(peer: pair.host.peer, name: "unwanted"))
        #expect(ContinuousClock.now - start < promptly)
        await #expect(throws: TransferError.cancelled(peer: pair.client.peer, name: "unwanted")) {
            _ = try await readAll(incoming)
        }
    }

    @Test("the connection closes mid-stream: both sides get connectionClosed")
    func connectionCloses() async throws {
        let pair = try await SessionPair.connect()
        let stream = try pair.client.startStream(withName: "cut", toPeer: pair.host.peer)
        try await stream.write(Data(count: 10))
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        await pair.client.disconnect()
        let error = await #expect(throws: TransferError.self) { _ = try await readAll(incoming) }
        #expect(error == .connectionClosed(nil, peer: pair.client.peer, name: "cut"))
        #expect(error?.reason == .peerDisconnected)
        await #expect(throws: TransferError.self) { try await stream.write(Data(count: 10)) }
    }

    @Test("stream names: empty or over 16 KiB are refused; any other name arrives as given")
    func names() async throws {
        let pair = try await SessionPair.connect()
        #expect(throws: TransferError.self) { try pair.client.startStream(withName: "", toPeer: pair.host.peer) }
        let long = String(repeating: "é", count: 8_193)
        #expect(throws: TransferError.self) { try pair.client.startStream(withName: long, toPeer: pair.host.peer) }
        let odd = "../../etc/passwd\u{0}☃"
        let stream = try pair.client.startStream(withName: odd, toPeer: pair.host.peer)
        try stream.finish()
        let incoming = try #require(try await pair.hostLog.waitForStreams(1).first)
        #expect(incoming.name == odd)
        #expect(try await readAll(incoming).isEmpty)
        let stranger = try PeerID(displayName: "stranger")
        #expect(throws: SessionError.peerNotConnected(stranger)) {
            try pair.client.startStream(withName: "x", toPeer: stranger)
        }
    }
}
