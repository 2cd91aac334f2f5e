import NIOCore
import PeerConnectivityCore
import Testing

@testable import PeerConnectivity

/// The session's decisions on a link's reliable messages, in memory: what a send does with and without
/// a link, up and down; when it waits for room and what wakes it; what an acknowledgement may confirm;
/// what the first message of a peer that does not resume changes.
@Suite("Session state machine: the message path of a link")
struct SessionMessagePathTests {
    private typealias Table = SessionSimulation.Table
    private static let peer = OrderedPeers.high

    /// A table holding `peer` connected over `connection`, with a link if `link`.
    private static func connected(over connection: SimulatedConnection, link: Bool = true) throws -> Table {
        var table = Table(localPeer: OrderedPeers.low, maximumPeers: 4, reconnectionWindow: .seconds(10))
        try table.reserve(peer)
        _ = table.attach(connection, to: peer)
        _ = table.established(peer, on: connection)
        if link { table[peer]?.link = Table.Link() }
        _ = table.takeChanges()
        return table
    }

    /// A DATA frame of `payload` bytes after the header.
    private static func frame(payload: Int) -> EncodedFrame {
        EncodedFrame(head: ByteBuffer(repeating: 0, count: WireProtocol.headerLength + payload))
    }

    @Test("without a link a send goes plainly; with one it is numbered and kept; a peer not held or too small refuses")
    func sendDecisions() throws {
        let connection = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        var plain = try Self.connected(over: connection, link: false)
        guard case .plain(let on) = try plain.sendResumable(Self.frame(payload: 8), to: Self.peer, limit: .max) else {
            Issue.record("a peer without a link was not sent to plainly")
            return
        }
        #expect(on === connection)
        let stranger = try PeerID(displayName: "stranger")
        #expect(throws: SessionError.peerNotConnected(stranger)) {
            try plain.sendResumable(Self.frame(payload: 8), to: stranger, limit: .max)
        }

        var table = try Self.connected(over: connection)
        let frame = Self.frame(payload: 8)
        guard case .numbered(let live) = try table.sendResumable(frame, to: Self.peer, limit: .max) else {
            Issue.record("a send on a link was not numbered")
            return
        }
        #expect(live === connection)
        #expect(table[Self.peer]?.link?.ledger.retainedBytes == frame.byteCount)
        #expect(table[Self.peer]?.link?.ledger.nextToSend == 1)

        table[Self.peer]?.peerAccepts = 4
        #expect(throws: SessionError.messageTooLargeForPeer(Self.peer, size: 8, limit: 4)) {
            try table.sendResumable(frame, to: Self.peer, limit: .max)
        }
        #expect(table[Self.peer]?.link?.ledger.nextToSend == 1, "a refused message is not numbered")
    }

    @Test("while the link is down a send is kept for when it is back; with no link left it is refused")
    func sendWhileDown() throws {
        let connection = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        var table = try Self.connected(over: connection)
        table[Self.peer]?.state = .connecting
        table[Self.peer]?.connection = nil
        table[Self.peer]?.link?.reconnecting = .init(generation: 1)
        guard case .numbered(live: nil) = try table.sendResumable(Self.frame(payload: 8), to: Self.peer, limit: .max)
        else {
            Issue.record("a send while the link is down was not kept for later")
            return
        }
        #expect(table[Self.peer]?.link?.ledger.unconfirmedCount == 1)
        #expect(table.unqueued(to: Self.peer), "a message that could not be queued stays kept")

        table[Self.peer]?.link = nil
        #expect(throws: SessionError.peerNotConnected(Self.peer)) {
            try table.sendResumable(Self.frame(payload: 8), to: Self.peer, limit: .max)
        }
    }

    @Test("past the kept limit a send waits; an ACK frees room and wakes it; an ACK past what was sent is a violation")
    func roomAndAcknowledgements() throws {
        let connection = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        var table = try Self.connected(over: connection)
        let frame = Self.frame(payload: 100)
        let limit = 2 * frame.byteCount
        for _ in 0..<2 {
            guard case .numbered = try table.sendResumable(frame, to: Self.peer, limit: limit) else {
                Issue.record("a send within the limit did not go")
                return
            }
        }
        guard case .full = try table.sendResumable(frame, to: Self.peer, limit: limit) else {
            Issue.record("a send past the limit did not wait")
            return
        }
        let waits = table.waitForRoom(to: Self.peer, adding: frame.byteCount, limit: limit, waiter: 7)
        #expect(waits)

        let other = SimulatedConnection(number: 2, inviter: 0, invitee: 1)
        let stale = table.acknowledged(2, from: Self.peer, on: other)
        #expect(stale.waiters.isEmpty && stale.violation == nil, "an ACK from another connection changes nothing")
        let ack = table.acknowledged(1, from: Self.peer, on: connection)
        #expect(ack.waiters == [7] && ack.violation == nil)
        #expect(table[Self.peer]?.link?.ledger.unconfirmedCount == 1)
        let waitsAgain = table.waitForRoom(to: Self.peer, adding: frame.byteCount, limit: limit, waiter: 8)
        #expect(!waitsAgain, "room now")

        let past = table.acknowledged(3, from: Self.peer, on: connection)
        #expect(past.violation != nil, "an ACK of 3 where 2 were sent")
    }

    @Test(
        "a peer's first message without RESUME-SECRET stops keeping and wakes the waiters; every 64th is acknowledged"
    )
    func receiving() throws {
        let connection = SimulatedConnection(number: 1, inviter: 0, invitee: 1)
        var table = try Self.connected(over: connection)
        let frame = Self.frame(payload: 100)
        for _ in 0..<2 { _ = try table.sendResumable(frame, to: Self.peer, limit: 2 * frame.byteCount) }
        let waits = table.waitForRoom(to: Self.peer, adding: frame.byteCount, limit: 2 * frame.byteCount, waiter: 5)
        #expect(waits)

        let first = table.receivedMessage(bytes: 10, from: Self.peer, on: connection)
        #expect(first.waiters == [5], "a peer that does not resume: nothing is kept, nothing waits")
        #expect(table[Self.peer]?.link?.ledger.retaining == false)
        #expect(!table.unqueued(to: Self.peer), "a message that could not be queued is not kept")
        guard case .deliverAndArmAckTimer = first.action else {
            Issue.record("the first message since an ACK did not arm the timer")
            return
        }
        var acks: [UInt64] = []
        for _ in 2...64 {
            if case .deliverAndAck(let count) = table.receivedMessage(bytes: 10, from: Self.peer, on: connection).action
            {
                acks.append(count)
            }
        }
        #expect(acks == [64])
        _ = table.receivedMessage(bytes: 10, from: Self.peer, on: connection)
        let other = SimulatedConnection(number: 2, inviter: 0, invitee: 1)
        let elsewhere = table.receivedMessage(bytes: 10, from: Self.peer, on: other)
        #expect(elsewhere.action == nil, "not the peer's connection")
        let dueElsewhere = table.ackDue(to: Self.peer, on: other)
        let due = table.ackDue(to: Self.peer, on: connection)
        let dueAgain = table.ackDue(to: Self.peer, on: connection)
        #expect(dueElsewhere == nil)
        #expect(due == 65)
        #expect(dueAgain == nil, "nothing owed since")
    }
}
