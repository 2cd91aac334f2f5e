import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// Folders sent as one channel that are cut short, damaged on the way, or sent again changed, between real
/// sessions over loopback: the receiver keeps the blocks it took, only the others cross, and what lands is
/// the sender's folder.
@Suite("Folders: resume and damaged blocks", .serialized, .timeLimit(.minutes(2 * slowdown)))
struct FolderResumeTests {
    /// `count` files of `length` bytes (the last a little longer) in two folders, distinct by `seed`.
    private static func tree(count: Int, length: Int, seed: UInt64) -> [String: Data] {
        Dictionary(
            uniqueKeysWithValues: (0..<count).map { index in
                (
                    "part\(index % 2)/file-\(index).bin",
                    pattern(count: length + (index == count - 1 ? 77 : 0), seed: seed + UInt64(index))
                )
            }
        )
    }

    @Test("a link that drops mid-folder is resumed (reconnection): the folder goes on, only blocks not taken cross")
    func resumeAcrossReconnection() async throws {
        let scratch = try ScratchDirectory("folder-resume")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let pair = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: true),
            client: resumeConfiguration(receivingInto: scratch.url.appendingPathComponent("unused"), reconnects: true)
        )
        defer { pair.acceptor.cancel() }
        let tree = Self.tree(count: 24, length: 2 << 20, seed: 41)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(tree, in: source)
        let size = folderStreamLength(tree)

        let transfer = try pair.client.sendResource(at: source, withName: "cut", toPeer: pair.host.peer)
        try await waitFor(transfer.progress, fraction: 0.5)
        pair.client.abortConnection(to: pair.host.peer)
        try await transfer.wait()
        let resumed = resumedBytes(transfer.progress)
        #expect(resumed >= size / 4, "blocks taken before the cut were not sent again: \(resumed)")
        // Only what was in flight at the cut (the window, and the block it was in) crossed twice.
        #expect(transfer.bytesSent <= UInt64(size) + (18 << 20), "sent: \(transfer.bytesSent)")
        #expect(transfer.statistics.blocksResumed > 0 && transfer.statistics.reopenings == 1)
        #expect(transfer.progress.completedUnitCount == size)

        let finished = try await pair.hostLog.waitForResources(2)
        #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(try finished[1].result.get().path == received.path + "/cut")
        #expect(try folderFiles(in: received.appendingPathComponent("cut")) == tree, "every file once, whole")
        #expect(try scratch.contents("received") == ["cut"], "no partial file is left")
    }

    @Test("a receiver that restarts resumes a folder from the record it kept on disk")
    func resumeAfterReceiverRestart() async throws {
        let scratch = try ScratchDirectory("folder-restart")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let tree = Self.tree(count: 24, length: 2 << 20, seed: 71)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(tree, in: source)
        let size = folderStreamLength(tree)
        let client = Session(
            peer: try PeerID(displayName: "folder-restart-client"),
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
            try await sendAndCut(source, as: "restart", over: first) { await $0.host.disconnect() }
        }
        let hidden = try scratch.contents("received").filter { $0.hasPrefix(".partial-") }
        #expect(hidden.contains { $0.hasSuffix(".folder") }, "a record of the folder: \(hidden)")
        #expect(hidden.contains { $0.hasSuffix(".d") }, "its staging directory: \(hidden)")
        #expect(try scratch.contents("received") == hidden, "the folder is not in place before it is whole")
        // A new process knows nothing but what is on disk.
        PartialResourceStore.shared.forget(received.path)
        let second = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            clientSession: client
        )
        defer { second.acceptor.cancel() }
        let again = try client.sendResource(at: source, withName: "restart", toPeer: second.host.peer)
        try await again.wait()
        #expect(resumedBytes(again.progress) >= size / 4)
        #expect(again.bytesSent == UInt64(size - resumedBytes(again.progress)))
        let url = try #require(try await second.hostLog.waitForResources(1).first?.result.get())
        #expect(url.path == received.path + "/restart")
        #expect(try folderFiles(in: url) == tree, "every file once, whole")
        #expect(try scratch.contents("received") == ["restart"], "no partial file or record is left")
    }

    @Test("a bit flipped on the wire in a folder's block is caught, the block crosses again, the folder is right")
    func damagedBlock() async throws {
        let scratch = try ScratchDirectory("folder-damaged")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let (pair, proxy) = try await pairDamagingOneChunk(receivingInto: received, scratch: scratch)
        defer { pair.acceptor.cancel() }
        let tree = Self.tree(count: 16, length: 500_000, seed: 51)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(tree, in: source)

        let transfer = try pair.client.sendResource(at: source, withName: "damaged", toPeer: pair.host.peer)
        try await transfer.wait()
        let statistics = transfer.statistics
        #expect(statistics.reopenings == 1)
        #expect(statistics.blocksResumed >= 2, "the blocks before the damaged one were kept")
        #expect(transfer.bytesSent > UInt64(folderStreamLength(tree)), "the damaged block crossed twice")
        let finished = try await pair.hostLog.waitForResources(2)
        #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(try finished[1].result.get().path == received.path + "/damaged")
        #expect(try folderFiles(in: received.appendingPathComponent("damaged")) == tree)
        #expect(try scratch.contents("received") == ["damaged"], "no partial file is left")
        await proxy.stop()
    }

    @Test("a different folder of the same name and length is offered the kept blocks, refuses them, and never mixes")
    func differentFolderSameName() async throws {
        let scratch = try ScratchDirectory("folder-different")
        defer { scratch.remove() }
        let received = scratch.url.appendingPathComponent("received")
        let pair = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            client: resumeConfiguration(receivingInto: scratch.url.appendingPathComponent("unused"), reconnects: false)
        )
        defer { pair.acceptor.cancel() }
        let first = Self.tree(count: 24, length: 2 << 20, seed: 61)
        // The same paths and lengths, other bytes: the same stream length.
        let second = Self.tree(count: 24, length: 2 << 20, seed: 161)
        let source = scratch.url.appendingPathComponent("source", isDirectory: true)
        try writeFolder(first, in: source)
        try await sendAndCut(source, as: "same", over: pair) { $0.client.abortConnection(to: $0.host.peer) }
        let kept = try scratch.contents("received")
        #expect(kept.allSatisfy { $0.hasPrefix(".partial-") }, "only what a resume keeps: \(kept)")
        #expect(kept.contains { $0.hasSuffix(".d") }, "the files taken, staged: \(kept)")

        let other = try await SessionPair.connect(
            host: resumeConfiguration(receivingInto: received, reconnects: false),
            clientSession: pair.client
        )
        defer { other.acceptor.cancel() }
        try writeFolder(second, in: source)
        let again = try pair.client.sendResource(at: source, withName: "same", toPeer: other.host.peer)
        try await again.wait()
        // The first folder's blocks were offered (same sender, name and length) and refused: their digest differs.
        #expect(resumedBytes(again.progress) == 0)
        #expect(again.bytesSent == UInt64(folderStreamLength(second)))
        _ = try await other.hostLog.waitForResources(1)

        // What the first folder staged went when the second started over: only the second lands.
        #expect(try folderFiles(in: received.appendingPathComponent("same")) == second, "no file of the first")
        #expect(try scratch.contents("received") == ["same"], "no partial file, record or staging directory")
    }
}
