import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Tasks on a session's executor: they run on its I/O thread, and what they send keeps its order.
@Suite("Session task executor", .timeLimit(.minutes(1 * slowdown)))
struct TaskExecutorTests {
    /// The name of the thread running the caller.
    private static func threadName() -> String {
        Thread.current.name ?? ""
    }

    @Test("a task preferring the executor runs on a NIO event loop thread, a plain task does not")
    func runsOnTheEventLoop() async throws {
        let session = Session(peer: try PeerID(displayName: "executor"))
        let onLoop = await Task(executorPreference: session.taskExecutor) { Self.threadName() }.value
        let plain = await Task.detached { Self.threadName() }.value
        #expect(onLoop.hasPrefix("NIO-"), "ran on thread \(onLoop)")
        #expect(!plain.hasPrefix("NIO-"), "ran on thread \(plain)")
    }

    @Test("an echo on the host's executor and two senders on the client, one on its executor: all in order")
    func echoKeepsOrder() async throws {
        let pair = try await SessionPair.connect()
        defer { pair.acceptor.cancel() }
        let host = pair.host
        let (subscribed, echoSubscribed) = AsyncStream.makeStream(of: Void.self)
        let echo = Task(executorPreference: host.taskExecutor) {
            var events = host.events.makeAsyncIterator()
            echoSubscribed.finish()
            while let event = await events.next() {
                guard case .dataReceived(let data, let peer, _) = event else { continue }
                try? await host.send(data, toPeers: [peer])
            }
        }
        defer { echo.cancel() }
        for await _ in subscribed {}  // the echo sees every message sent from now on
        let client = pair.client
        let hostPeer = host.peer
        let count = 1_000
        /// Message `index` of sender `tag`: the tag, the index, then up to 16 KiB of its own pattern.
        @Sendable func message(_ tag: UInt8, _ index: Int) -> Data {
            var data = Data([tag])
            withUnsafeBytes(of: UInt32(index).bigEndian) { data.append(contentsOf: $0) }
            data.append(pattern(count: (index * 131) % (16 << 10), seed: UInt64(index)))
            return data
        }
        // Subscribed before anything is sent: an iterator sees the events from when it is made, and
        // the first echoes can be back before a loop started after the senders would subscribe.
        var events = client.events.makeAsyncIterator()
        let onLoop = Task(executorPreference: client.taskExecutor) {
            for index in 0..<count { try await client.send(message(1, index), toPeers: [hostPeer]) }
        }
        let plain = Task {
            for index in 0..<count { try await client.send(message(2, index), toPeers: [hostPeer]) }
        }
        var next: [UInt8: Int] = [1: 0, 2: 0]
        while let event = await events.next() {
            guard case .dataReceived(let data, _, _) = event, let tag = data.first, let expected = next[tag] else {
                continue
            }
            #expect(data == message(tag, expected), "sender \(tag) message \(expected) differs or is out of order")
            next[tag] = expected + 1
            if next.values.allSatisfy({ $0 == count }) { break }
        }
        try await onLoop.value
        try await plain.value
        #expect(next == [1: count, 2: count])
        await client.disconnect()
    }

    @Test("streams written and read on the sessions' executors deliver every byte, and messages pass meanwhile")
    func streamsOnTheExecutors() async throws {
        let pair = try await SessionPair.connect()
        let (client, host, hostPeer) = (pair.client, pair.host, pair.host.peer)
        let (count, size) = (8, 1 << 20)
        // Made here, not on the loop: work that long on an event loop would hold up its keepalives.
        let contents = (0..<count).map { pattern(count: size, seed: UInt64($0)) }
        // Chunks queued by a task on the loop go out in batches the loop drains after the task yields.
        let writers = Task(executorPreference: client.taskExecutor) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, content) in contents.enumerated() {
                    group.addTask(executorPreference: client.taskExecutor) {
                        let stream = try client.startStream(withName: "s\(index)", toPeer: hostPeer)
                        var offset = 0
                        while offset < size {
                            let end = min(offset + 300_000, size)
                            try await stream.write(content[offset..<end])
                            offset = end
                        }
                        try stream.finish()
                    }
                }
                try await client.send(Data("between the chunks".utf8), toPeers: [hostPeer])
                try await group.waitForAll()
            }
        }
        let streams = try await pair.hostLog.waitForStreams(count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for stream in streams {
                group.addTask(executorPreference: host.taskExecutor) {
                    let index = try #require(Int(stream.name.dropFirst()))
                    var received = Data()
                    for try await chunk in stream { received.append(chunk) }
                    #expect(received == contents[index], "stream \(stream.name)")
                }
            }
            try await group.waitForAll()
        }
        try await writers.value
        let deadline = ContinuousClock.now + waitLimit
        while pair.hostLog.messages.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(pair.hostLog.messages == [Data("between the chunks".utf8)])
        await client.disconnect()
    }
}
