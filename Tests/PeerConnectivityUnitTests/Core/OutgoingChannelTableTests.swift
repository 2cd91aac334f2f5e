import PeerConnectivityCore
import Testing

/// A frame as the table sees it: a name to follow it by, and its length on the wire.
private struct Queued: QueuedFrame, Equatable {
    let name: String
    let readableBytes: Int

    init(_ name: String, bytes: Int = 10) {
        self.name = name
        self.readableBytes = bytes
    }
}

/// Waiters are named, so that a test sees which one the table hands back.
private typealias Table = OutgoingChannelTable<Queued, String>

@Suite("OutgoingChannelTable")
struct OutgoingChannelTableTests {
    /// A chunk's payload in most tests, and the queue limit that never holds a writer back.
    private static let chunk = 64 << 10
    private static let roomy = 64 << 20

    /// The inviter's table with a stream (channel 1) whose OPEN has gone to the socket.
    private func tableWithStream(awaitsDone: Bool = false) -> Table {
        var table = Table(firstChannel: 1)
        #expect(table.open(awaitsDone: awaitsDone) { Queued("open-\($0)") } == 1)
        #expect(table.takeNext(queueLimit: Self.roomy)?.frame == Queued("open-1"))
        return table
    }

    private func isReady(_ wait: Table.Wait) -> Bool {
        if case .ready = wait { return true }
        return false
    }

    private func isSuspended(_ wait: Table.Wait) -> Bool {
        if case .suspended = wait { return true }
        return false
    }

    private func failure(_ wait: Table.Wait) -> ChannelClosedError? {
        if case .failed(let error) = wait { return error }
        return nil
    }

    /// The names of every frame taken from the queue until it is empty.
    private func drain(_ table: inout Table, queueLimit: Int = Self.roomy) -> [String] {
        var names: [String] = []
        while let (frame, _) = table.takeNext(queueLimit: queueLimit) { names.append(frame.name) }
        return names
    }

    @Test("channels are numbered from the first one given, two apart, each with its OPEN queued")
    func numbering() {
        var table = Table(firstChannel: 2)
        #expect(table.open(awaitsDone: false) { Queued("open-\($0)") } == 2)
        #expect(table.open(awaitsDone: true) { Queued("open-\($0)") } == 4)
        #expect(table.count == 2)
        #expect(drain(&table) == ["open-2", "open-4"])
        #expect(table.isQueueEmpty)
    }

    @Test("credit runs out: the writer waits, and goes on only once the credit covers its whole chunk")
    func creditExhaustion() throws {
        var table = tableWithStream()
        let fits = WireProtocol.initialChannelWindow / Self.chunk
        for index in 0..<fits {
            #expect(try table.queueChunk(Queued("c\(index)"), payloadLength: Self.chunk, on: 1, queueLimit: Self.roomy))
        }
        #expect(try !table.queueChunk(Queued("over"), payloadLength: Self.chunk, on: 1, queueLimit: Self.roomy))
        #expect(isSuspended(table.waitToWrite(on: 1, payloadLength: Self.chunk, queueLimit: Self.roomy, waiter: "w")))
        // The queue draining does not wake it: the credit is still short.
        #expect(drain(&table).count == fits)
        #expect(table.credited(UInt32(Self.chunk - 1), on: 1, queueLimit: Self.roomy) == nil)
        #expect(table.credited(1, on: 1, queueLimit: Self.roomy) == "w")
        #expect(table.credited(1, on: 1, queueLimit: Self.roomy) == nil, "handed back once")
        #expect(try table.queueChunk(Queued("next"), payloadLength: Self.chunk, on: 1, queueLimit: Self.roomy))
        #expect(try !table.queueChunk(Queued("short"), payloadLength: 2, on: 1, queueLimit: Self.roomy))
    }

    @Test("credit stops at the largest window the protocol allows")
    func creditCap() throws {
        var table = tableWithStream()
        _ = table.credited(UInt32.max, on: 1, queueLimit: Self.roomy)
        _ = table.credited(UInt32.max, on: 1, queueLimit: Self.roomy)
        let most = WireProtocol.maximumChannelWindow
        #expect(try !table.queueChunk(Queued("c"), payloadLength: most + 1, on: 1, queueLimit: Self.roomy))
        #expect(try table.queueChunk(Queued("c"), payloadLength: most, on: 1, queueLimit: Self.roomy))
    }

    @Test("a full queue holds the writer back until half of it has gone to the socket")
    func queueRoom() throws {
        var table = tableWithStream()
        let limit = 40
        for index in 0..<3 {
            #expect(try table.queueChunk(Queued("c\(index)"), payloadLength: 1, on: 1, queueLimit: limit))
        }
        // 30 of 40 bytes queued: room for one more, which fills it.
        #expect(try table.queueChunk(Queued("c3"), payloadLength: 1, on: 1, queueLimit: limit))
        #expect(try !table.queueChunk(Queued("c4"), payloadLength: 1, on: 1, queueLimit: limit))
        #expect(isSuspended(table.waitToWrite(on: 1, payloadLength: 1, queueLimit: limit, waiter: "w")))
        #expect(
            table.credited(1, on: 1, queueLimit: limit) == nil,
            "credit alone does not wake a writer the queue holds back"
        )
        #expect(table.takeNext(queueLimit: limit)?.writer == nil, "30 bytes left: over half")
        let half = table.takeNext(queueLimit: limit)
        #expect(half?.frame == Queued("c1"))
        #expect(half?.writer == "w", "20 bytes left: half")
        #expect(table.takeNext(queueLimit: limit)?.writer == nil, "handed back once")
    }

    @Test("a writer that asks to wait when its chunk fits after all goes on at once")
    func waitWhenItFits() {
        var table = tableWithStream()
        #expect(isReady(table.waitToWrite(on: 1, payloadLength: Self.chunk, queueLimit: Self.roomy, waiter: "w")))
        #expect(table.cancelWriter(on: 1) == nil, "not kept")
    }

    @Test("a cancelled writer is handed back, and the credit then wakes no one")
    func cancelledWriter() throws {
        var table = tableWithStream()
        let window = WireProtocol.initialChannelWindow
        #expect(try table.queueChunk(Queued("all"), payloadLength: window, on: 1, queueLimit: Self.roomy))
        #expect(isSuspended(table.waitToWrite(on: 1, payloadLength: 1, queueLimit: Self.roomy, waiter: "w")))
        #expect(table.cancelWriter(on: 1) == "w")
        #expect(table.credited(10, on: 1, queueLimit: Self.roomy) == nil)
    }

    @Test("three channels take turns, one frame each, whatever order their frames were queued in")
    func fairness() throws {
        var table = Table(firstChannel: 1)
        for _ in 0..<3 { _ = table.open(awaitsDone: false) { Queued("open-\($0)") } }
        for index in 0..<3 {
            #expect(try table.queueChunk(Queued("1.\(index)"), payloadLength: 1, on: 1, queueLimit: Self.roomy))
        }
        #expect(try table.queueChunk(Queued("3.0"), payloadLength: 1, on: 3, queueLimit: Self.roomy))
        for index in 0..<2 {
            #expect(try table.queueChunk(Queued("5.\(index)"), payloadLength: 1, on: 5, queueLimit: Self.roomy))
        }
        try table.queue(Queued("end-3"), on: 3, isEnd: true)
        #expect(
            drain(&table) == ["open-1", "open-3", "open-5", "1.0", "3.0", "5.0", "1.1", "end-3", "5.1", "1.2"]
        )
    }

    @Test("the peer's RESET mid-queue drops the channel's frames, fails its waiters, and stays until the owner lets go")
    func resetByPeerMidQueue() throws {
        var table = tableWithStream(awaitsDone: true)
        _ = table.open(awaitsDone: false) { Queued("open-\($0)") }
        let window = WireProtocol.initialChannelWindow
        #expect(try table.queueChunk(Queued("1.0"), payloadLength: window, on: 1, queueLimit: Self.roomy))
        #expect(isSuspended(table.waitToWrite(on: 1, payloadLength: 1, queueLimit: Self.roomy, waiter: "writer")))
        #expect(isSuspended(table.waitForHave(on: 1, waiter: "have")))
        #expect(try table.queueChunk(Queued("3.0"), payloadLength: 1, on: 3, queueLimit: Self.roomy))

        let (waiters, error) = table.resetByPeer(1, .noSpace)
        #expect(Set(waiters) == ["writer", "have"])
        #expect(error == ChannelClosedError(channel: 1, cause: .reset(.noSpace, byPeer: true)))
        #expect(drain(&table) == ["open-3", "3.0"], "channel 1's chunk is gone, channel 3's stays")
        #expect(throws: error) {
            try table.queueChunk(Queued("again"), payloadLength: 1, on: 1, queueLimit: Self.roomy)
        }
        #expect(failure(table.waitForDone(on: 1, waiter: "done")) == error)
        #expect(table.credited(10, on: 1, queueLimit: Self.roomy) == nil)
        #expect(table.receivedHave(.nothing, on: 1) == nil)
        #expect(table.confirmedDone(on: 1) == nil)
        #expect(table.resetByPeer(1, .failed).waiters.isEmpty, "a second RESET changes nothing")
        #expect(throws: error) { try table.have(on: 1) }

        let count = table.count
        let letGo = table.reset(1)
        #expect(letGo.waiters.isEmpty)
        #expect(!letGo.tellPeer, "the peer reset it: no RESET back")
        #expect(table.count == count - 1)
    }

    @Test("this side's reset tells the peer only once the OPEN has gone out, and drops what is queued")
    func resetByThisSide() throws {
        var table = Table(firstChannel: 1)
        _ = table.open(awaitsDone: false) { Queued("open-\($0)") }
        let early = table.reset(1)
        #expect(!early.tellPeer, "the peer never heard of it")
        #expect(table.isQueueEmpty)

        var written = tableWithStream()
        #expect(
            try written.queueChunk(
                Queued("c"),
                payloadLength: WireProtocol.initialChannelWindow,
                on: 1,
                queueLimit: Self.roomy
            )
        )
        #expect(isSuspended(written.waitToWrite(on: 1, payloadLength: 1, queueLimit: Self.roomy, waiter: "w")))
        let late = written.reset(1)
        #expect(late.tellPeer)
        #expect(late.waiters == ["w"])
        #expect(written.isQueueEmpty)
        #expect(written.count == 0)
        #expect(throws: ChannelClosedError(channel: 1, cause: .reset(.cancelled, byPeer: false))) {
            try written.queue(Queued("end"), on: 1, isEnd: true)
        }
        #expect(!written.reset(1).tellPeer, "once")
    }

    @Test("HAVE: kept when it comes first, handed to the sender when it waits, a second one ignored")
    func have() throws {
        let have = Frame.Have(digest: [UInt8](repeating: 7, count: WireProtocol.digestLength), bitmap: [0b101])
        var first = tableWithStream(awaitsDone: true)
        #expect(try first.have(on: 1) == nil)
        #expect(first.receivedHave(have, on: 1) == nil)
        #expect(isReady(first.waitForHave(on: 1, waiter: "sender")))
        #expect(try first.have(on: 1) == have)

        var waiting = tableWithStream(awaitsDone: true)
        #expect(isSuspended(waiting.waitForHave(on: 1, waiter: "sender")))
        #expect(waiting.receivedHave(have, on: 1) == "sender")
        #expect(waiting.receivedHave(.nothing, on: 1) == nil)
        #expect(try waiting.have(on: 1) == have, "the first HAVE stays: it says where the sender resumes")
    }

    @Test("a stream ends with its END; a resource waits for DONE, whichever comes first")
    func done() throws {
        var stream = tableWithStream()
        try stream.queue(Queued("end"), on: 1, isEnd: true)
        #expect(stream.count == 0)
        #expect(drain(&stream) == ["end"], "the END still goes out")

        var kept = tableWithStream(awaitsDone: true)
        try kept.queue(Queued("end"), on: 1, isEnd: true)
        #expect(kept.count == 1)
        #expect(kept.confirmedDone(on: 1) == nil)
        #expect(isReady(kept.waitForDone(on: 1, waiter: "sender")))
        #expect(kept.count == 0)

        var waiting = tableWithStream(awaitsDone: true)
        try waiting.queue(Queued("end"), on: 1, isEnd: true)
        #expect(isSuspended(waiting.waitForDone(on: 1, waiter: "sender")))
        #expect(waiting.cancelDoneWaiter(on: 1) == "sender")
        #expect(waiting.count == 1, "a cancelled wait leaves the channel to its owner")
        #expect(isSuspended(waiting.waitForDone(on: 1, waiter: "again")))
        #expect(waiting.confirmedDone(on: 1) == "again")
        #expect(waiting.count == 0)
        #expect(waiting.confirmedDone(on: 1) == nil)
    }

    @Test("closing refuses every call but keeps the queue; closed drops it and fails every waiter")
    func closing() throws {
        var table = tableWithStream(awaitsDone: true)
        let window = WireProtocol.initialChannelWindow
        #expect(try table.queueChunk(Queued("c"), payloadLength: window, on: 1, queueLimit: Self.roomy))
        #expect(isSuspended(table.waitToWrite(on: 1, payloadLength: 1, queueLimit: Self.roomy, waiter: "w")))
        table.refuseNewWrites(.localDisconnect)
        let closing = ChannelClosedError(channel: 1, cause: .connectionClosed(.localDisconnect))
        #expect(throws: closing) { try table.queueChunk(Queued("d"), payloadLength: 1, on: 1, queueLimit: Self.roomy) }
        #expect(failure(table.waitForHave(on: 1, waiter: "h")) == closing)
        #expect(table.reset(1).waiters.isEmpty, "no RESET once closing: the GOODBYE follows what is queued")
        #expect(table.count == 1)
        #expect(!table.isQueueEmpty)

        let failed = table.close(.connectionLost)
        #expect(failed.map(\.waiter) == ["w"])
        #expect(failed.map(\.error) == [ChannelClosedError(channel: 1, cause: .connectionClosed(.connectionLost))])
        #expect(table.isQueueEmpty)
        #expect(table.count == 0)
        #expect(throws: closing, "later calls say the first reason") {
            try table.queue(Queued("end"), on: 1)
        }
    }
}
