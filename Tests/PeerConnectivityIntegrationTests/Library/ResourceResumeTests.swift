import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Resources that are cut short and resumed, and blocks damaged on the way, between real sessions over
/// loopback: only the blocks missing cross again, and the file that lands is the sender's.
@Suite("Resources: resume and damaged blocks", .serialized, .timeLimit(.minutes(2 * slowdown)))
struct ResourceResumeTests {
    static let size = 48 << 20

    @Test("a link that drops mid-transfer is resumed (reconnection): the transfer goes on, only missing blocks cross")
    func resumeAcrossReconnection() async throws {
        let scratch = try ScratchDirectory("resume-reconnect")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let pair = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: true),
            client: resumeConfiguration(receivingInto: scratch.url.appendingPathComponent("unused"), reconnects: true)
        )
        defer { pair.acceptor.cancel() }
        let content = pattern(count: Self.size, seed: 31)
        let source = scratch.url.appendingPathComponent("source.bin")
        try content.write(to: source)
        let transfer = try pair.client.sendResource(at: source, withName: "cut.bin", toPeer: pair.host.peer)
        try await waitFor(transfer.progress, fraction: 0.5)
        pair.client.abortConnection(to: pair.host.peer)
        try await transfer.wait()
        let resumed = resumedBytes(transfer.progress)
        #expect(resumed >= Int64(Self.size) / 4, "blocks received before the cut were not sent again: \(resumed)")
        // Only what was in flight at the cut crossed twice: at most the resource window (bytes not yet written
        // and checked; a receiver slowed by a loaded machine has all of it out) and the block the cut was in.
        let inFlight = Session.Configuration.patient.resourceWindow + WireProtocol.resourceBlockLength
        #expect(transfer.bytesSent <= UInt64(Self.size + inFlight), "sent: \(transfer.bytesSent)")
        #expect(transfer.progress.completedUnitCount == Int64(Self.size))
        let finished = try await pair.hostLog.waitForResources(2)
        #expect(throws: TransferError.self) { try finished[0].result.get() }
        let url = try finished[1].result.get()
        #expect(try Data(contentsOf: url) == content)
        #expect(try scratch.contents("received") == ["cut.bin"], "no partial file or record is left")
    }

    @Test("a receiver that restarts resumes from the blocks it kept on disk")
    func resumeAfterReceiverRestart() async throws {
        let scratch = try ScratchDirectory("resume-restart")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let content = pattern(count: Self.size, seed: 32)
        let source = scratch.url.appendingPathComponent("source.bin")
        try content.write(to: source)
        let client = Session(
            peer: try PeerID(displayName: "restart-client"),
            configuration: resumeConfiguration(
                receivingInto: scratch.url.appendingPathComponent("unused"),
                reconnects: false
            )
        )
        do {
            let first = try await SessionPair.connect(
                host: resumeConfiguration(receivingInto: received, reconnects: false),
                clientSession: client
            )
            defer { first.acceptor.cancel() }
            try await sendAndCut(source, as: "restart.bin", over: first) { await $0.host.disconnect() }
        }
        let kept = try scratch.contents("received")
        #expect(
            kept.count == 2 && kept.allSatisfy { $0.hasPrefix(".partial-") },
            "a partial file and its record: \(kept)"
        )
        // A new process knows nothing but what is on disk.
        PartialResourceStore.shared.forget(received.path)
        let second = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            clientSession: client
        )
        defer { second.acceptor.cancel() }
        let again = try client.sendResource(at: source, withName: "restart.bin", toPeer: second.host.peer)
        try await again.wait()
        #expect(resumedBytes(again.progress) >= Int64(Self.size) / 4)
        #expect(again.bytesSent == UInt64(Int64(Self.size) - resumedBytes(again.progress)))
        let url = try #require(try await second.hostLog.waitForResources(1).first?.result.get())
        #expect(try Data(contentsOf: url) == content)
        #expect(try scratch.contents("received") == ["restart.bin"])
    }

    @Test("a different file with the same name and length is offered the kept blocks, refuses them, and never mixes")
    func differentFileSameName() async throws {
        let scratch = try ScratchDirectory("resume-different")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let pair = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            client: resumeConfiguration(receivingInto: scratch.url.appendingPathComponent("unused"), reconnects: false)
        )
        defer { pair.acceptor.cancel() }
        let first = pattern(count: Self.size, seed: 33)
        var second = first
        second[10] ^= 0xFF  // the same but for one byte in the first block
        let source = scratch.url.appendingPathComponent("source.bin")
        try first.write(to: source)
        try await sendAndCut(source, as: "same.bin", over: pair) { $0.client.abortConnection(to: $0.host.peer) }
        #expect(try scratch.contents("received").count == 2, "the first file's blocks are kept")

        let other = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            clientSession: pair.client
        )
        defer { other.acceptor.cancel() }
        try second.write(to: source)
        let transfer2 = try pair.client.sendResource(at: source, withName: "same.bin", toPeer: other.host.peer)
        try await transfer2.wait()
        // The first file's blocks were offered (same sender, name and length) and refused: their digest differs.
        #expect(resumedBytes(transfer2.progress) == 0)
        #expect(transfer2.bytesSent == UInt64(Self.size))
        let url = try #require(try await other.hostLog.waitForResources(1).first?.result.get())
        #expect(try Data(contentsOf: url) == second)
    }

    @Test(
        "a bit flipped in a chunk on the wire is caught by its block's digest, the block crosses again, the file is right"
    )
    func damagedBlock() async throws {
        let scratch = try ScratchDirectory("damaged-block")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let (pair, proxy) = try await pairDamagingOneChunk(receivingInto: received, scratch: scratch)
        defer { pair.acceptor.cancel() }
        let content = pattern(count: 8 << 20, seed: 34)
        let source = scratch.url.appendingPathComponent("source.bin")
        try content.write(to: source)
        let transfer = try pair.client.sendResource(at: source, withName: "damaged.bin", toPeer: pair.host.peer)
        try await transfer.wait()
        // The second opening held the blocks before the damaged one.
        #expect(resumedBytes(transfer.progress) >= 2 << 20)
        #expect(transfer.bytesSent < UInt64(content.count) * 2, "not everything again: \(transfer.bytesSent)")
        #expect(transfer.bytesSent > UInt64(content.count), "the damaged block crossed twice")
        let statistics = transfer.statistics
        #expect(statistics.blocks == 8)
        #expect(statistics.reopenings == 1)
        #expect(statistics.blocksResumed >= 2 && statistics.blocksSent >= 8 + 1)
        #expect(statistics.bytesResumed == UInt64(statistics.blocksResumed) << 20)
        #expect(statistics.hashSeconds > 0 && statistics.readSeconds > 0)
        let finished = try await pair.hostLog.waitForResources(2)
        #expect(throws: TransferError.self) { try finished[0].result.get() }
        let url = try finished[1].result.get()
        #expect(try Data(contentsOf: url) == content)
        #expect(try scratch.contents("received") == ["damaged.bin"])
        await proxy.stop()
    }
}
