import Foundation
import PeerConnectivity
import PeerConnectivityTesting
import Testing

/// Resources (files) between two sessions over real loopback sockets, without DNS-SD.
@Suite("Resources", .timeLimit(.minutes(1 * slowdown)))
struct ResourceTests {
    /// A pair whose host receives into a fresh directory.
    private func pair(receiveInto directory: ScratchDirectory) async throws -> SessionPair {
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = directory.url.appendingPathComponent("received", isDirectory: true)
        return try await SessionPair.connect(host: configuration)
    }

    /// Writes `data` to a new file in `directory`.
    private func file(_ data: Data, named name: String, in directory: ScratchDirectory) throws -> URL {
        let url = directory.url.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    @Test(
        "a resource arrives byte for byte under its name, with progress on both sides (28 MiB: past the receiver's first write-behind drop)"
    )
    func content() async throws {
        let scratch = try ScratchDirectory("resource")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let content = pattern(count: 28 << 20 + 123, seed: 7)
        let source = try file(content, named: "source.bin", in: scratch)
        let transfer = try pair.client.sendResource(at: source, withName: "photo.jpg", toPeer: pair.host.peer)
        #expect(transfer.progress.totalUnitCount == Int64(content.count))
        try await transfer.wait()
        #expect(transfer.progress.completedUnitCount == Int64(content.count))
        let finished = try await pair.hostLog.waitForResources(1)
        let url = try #require(try finished.first?.result.get())
        #expect(finished.first?.name == "photo.jpg")
        #expect(url.lastPathComponent == "photo.jpg")
        #expect(try Data(contentsOf: url) == content)
        let progress = try #require(pair.hostLog.startedResources.first?.progress)
        #expect(progress.completedUnitCount == Int64(content.count))
        #expect(try scratch.contents("received") == ["photo.jpg"], "no partial file is left")
    }

    @Test("an empty file is a resource too")
    func emptyFile() async throws {
        let scratch = try ScratchDirectory("empty")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let source = try file(Data(), named: "empty", in: scratch)
        try await pair.client.sendResource(at: source, withName: "empty.txt", toPeer: pair.host.peer).wait()
        let url = try #require(try await pair.hostLog.waitForResources(1).first?.result.get())
        #expect(try Data(contentsOf: url).isEmpty)
    }

    @Test(
        "several resources at once to one peer, and to two peers, each arrive intact; a name taken is not overwritten"
    )
    func several() async throws {
        let scratch = try ScratchDirectory("several")
        defer { scratch.remove() }
        let first = try await pair(receiveInto: scratch)
        let secondDirectory = try ScratchDirectory("several-2")
        defer { secondDirectory.remove() }
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = secondDirectory.url
        let second = try await loopbackAdvertiser("second-host")
        let secondSession = Session(peer: second.peer, configuration: configuration)
        let secondLog = EventLog(secondSession)
        let acceptor = acceptAll(second, into: secondSession)
        defer { acceptor.cancel() }
        try await first.client.connectPeer(host: "127.0.0.1", port: second.port!, timeout: invitationTimeout)

        let contents = (0..<4).map { pattern(count: (3 << 20) + $0 * 1000, seed: UInt64(100 + $0)) }
        let sources = try contents.enumerated().map { try file($1, named: "source-\($0)", in: scratch) }
        var transfers: [ResourceTransfer] = []
        for (index, source) in sources.enumerated() {
            // All four carry the same name: the receiver keeps every one under its own file name.
            transfers.append(try first.client.sendResource(at: source, withName: "same.bin", toPeer: first.host.peer))
            transfers.append(try first.client.sendResource(at: source, withName: "file-\(index)", toPeer: second.peer))
        }
        for transfer in transfers { try await transfer.wait() }

        let toFirst = try await first.hostLog.waitForResources(4).map { try $0.result.get() }
        #expect(Set(toFirst.map(\.lastPathComponent)) == ["same.bin", "same (2).bin", "same (3).bin", "same (4).bin"])
        let receivedFirst = Set(try toFirst.map { try Data(contentsOf: $0) })
        #expect(receivedFirst == Set(contents))
        let toSecond = try await secondLog.waitForResources(4)
        for (name, result) in toSecond {
            let index = try #require(Int(name.dropFirst("file-".count)))
            #expect(try Data(contentsOf: try result.get()) == contents[index])
        }
    }

    /// A 64 MiB resource under way from the client to the host (a small window, so it takes a while),
    /// once the host has written its first bytes.
    private struct Midway {
        let scratch: ScratchDirectory
        let pair: SessionPair
        let transfer: ResourceTransfer
        /// The receiver's progress.
        let progress: Progress

        init(_ label: String, name: String) async throws {
            scratch = try ScratchDirectory(label)
            var configuration = Session.Configuration.patient
            configuration.resourceDirectory = scratch.url.appendingPathComponent("received", isDirectory: true)
            configuration.resourceWindow = 256 << 10
            pair = try await SessionPair.connect(host: configuration)
            transfer = try pair.client.sendResource(
                at: try await scratch.largeFile(mebibytes: 64),
                withName: name,
                toPeer: pair.host.peer
            )
            progress = try #require(try await pair.hostLog.waitForStartedResources(1).first)
            while progress.completedUnitCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
    }

    @Test("the sender cancels through its Progress: both sides get a cancelled error promptly; no file is left")
    func senderCancels() async throws {
        let midway = try await Midway("sender-cancels", name: "big.bin")
        let (scratch, pair, transfer) = (midway.scratch, midway.pair, midway.transfer)
        defer { scratch.remove() }
        let start = ContinuousClock.now
        transfer.progress.cancel()
        await #expect(throws: TransferError.cancelled(peer: pair.host.peer, name: "big.bin")) {
            try await transfer.wait()
        }
        let finished = try await pair.hostLog.waitForResources(1, timeout: promptly)
        #expect(ContinuousClock.now - start < promptly)
        #expect(throws: TransferError.cancelledByPeer(peer: pair.client.peer, name: "big.bin")) {
            try finished.first?.result.get()
        }
        #expect(try scratch.contents("received").isEmpty, "neither the file nor its partial is left")
        #expect(pair.client.connectedPeers == [pair.host.peer])
    }

    @Test("the receiver cancels through its Progress: both sides get a cancelled error promptly; no file is left")
    func receiverCancels() async throws {
        let midway = try await Midway("receiver-cancels", name: "big.bin")
        let (scratch, pair, transfer, progress) = (midway.scratch, midway.pair, midway.transfer, midway.progress)
        defer { scratch.remove() }
        let start = ContinuousClock.now
        progress.cancel()
        await #expect(throws: TransferError.cancelledByPeer(peer: pair.host.peer, name: "big.bin")) {
            try await transfer.wait()
        }
        #expect(ContinuousClock.now - start < promptly)
        let finished = try await pair.hostLog.waitForResources(1, timeout: promptly)
        #expect(throws: TransferError.cancelled(peer: pair.client.peer, name: "big.bin")) {
            try finished.first?.result.get()
        }
        #expect(try scratch.contents("received").isEmpty)
    }

    @Test(
        "the connection closes mid-transfer: both sides fail with connectionClosed; no file under its name, its blocks kept hidden"
    )
    func disconnect() async throws {
        let midway = try await Midway("disconnect", name: "cut.bin")
        let (scratch, pair, transfer) = (midway.scratch, midway.pair, midway.transfer)
        defer { scratch.remove() }
        // Two whole blocks checked, so that there is something to keep.
        while midway.progress.completedUnitCount < 3 << 20 { try await Task.sleep(for: .milliseconds(1)) }
        await pair.host.disconnect()
        let error = await #expect(throws: TransferError.self) { try await transfer.wait() }
        #expect(error == .connectionClosed(nil, peer: pair.host.peer, name: "cut.bin"))
        let finished = try await pair.hostLog.waitForResources(1)
        #expect(throws: TransferError.self) { try finished.first?.result.get() }
        let kept = try scratch.contents("received")
        #expect(kept.count == 2 && kept.allSatisfy { $0.hasPrefix(".partial-") }, "kept for a resume: \(kept)")
    }

    @Test("sending a missing file, or to a peer not connected, throws at once")
    func sendErrors() async throws {
        let scratch = try ScratchDirectory("errors")
        defer { scratch.remove() }
        let pair = try await pair(receiveInto: scratch)
        let missing = scratch.url.appendingPathComponent("missing")
        #expect(throws: TransferError.self) {
            try pair.client.sendResource(at: missing, withName: "m", toPeer: pair.host.peer)
        }
        // A directory is a folder, sent as its tree (FolderTests).
        let stranger = try PeerID(displayName: "stranger")
        let source = try file(Data("x".utf8), named: "x", in: scratch)
        #expect(throws: SessionError.peerNotConnected(stranger)) {
            try pair.client.sendResource(at: source, withName: "x", toPeer: stranger)
        }
    }
}
