import Crypto
import Foundation
import PeerConnectivityCore
import PeerConnectivityFuzz
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// A hand-written peer sends resources with hostile names and broken contents to a real session.
@Suite("Hostile resources", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct HostileResourceTests {
    /// A session receiving into `scratch/received`, and a raw socket that has joined it.
    private struct Target {
        let scratch: ScratchDirectory
        let joined: RawJoinedSession

        var directory: URL { scratch.url.appendingPathComponent("received", isDirectory: true) }
        var socket: RawSocket { joined.socket }
        var log: EventLog { joined.log }

        init(configure: (inout Session.Configuration) -> Void = { _ in }) async throws {
            scratch = try ScratchDirectory("hostile-resources")
            var configuration = Session.Configuration.patient
            configuration.resourceDirectory = scratch.url.appendingPathComponent("received", isDirectory: true)
            configure(&configuration)
            joined = try await RawJoinedSession("resource-target", configuration: configuration)
        }

        /// Sends a whole resource: OPEN, its blocks, END with `digest` (the right root by default),
        /// without waiting for HAVE (the session holds nothing of it).
        func send(channel: UInt32, name: [UInt8], content: [UInt8], size: UInt64? = nil, digest: [UInt8]? = nil) {
            socket.send(
                HandFrames.openResource(channel: channel, size: size ?? UInt64(content.count), name: name)
                    + HandFrames.resource(channel: channel, content, root: digest)
            )
        }
    }

    @Test(
        "names with '/' (paths below the directory), '..', NUL, absolute paths, 10,000 characters or invalid UTF-8 stay inside the directory"
    )
    func hostileNames() async throws {
        let target = try await Target()
        defer { target.scratch.remove() }
        let absolute = "/tmp/pc-escape-\(UUID().uuidString)"
        let names: [[UInt8]] = [
            Array("../escape".utf8),
            Array("../../../../../../tmp/pc-escape-relative".utf8),
            Array(absolute.utf8),
            Array("a/b/c.txt".utf8),
            Array("nul\u{0}byte.txt".utf8),
            Array("..".utf8),
            Array(".".utf8),
            Array(".hidden".utf8),
            Array(repeating: UInt8(ascii: "x"), count: 10_000),
            [0xFF, 0xFE, 0x2F, 0x2E, 0x2E, 0x2F, 0xC0, 0xAF, 0x65],
            Array("back\\slash\\..\\x".utf8),
            Array("line\nbreak".utf8),
        ]
        for (index, name) in names.enumerated() {
            target.send(channel: UInt32(2 * index + 1), name: name, content: Array("content \(index)".utf8))
        }
        let finished = try await target.log.waitForResources(names.count)
        let directory = target.directory.standardizedFileURL.resolvingSymlinksInPath()
        var files: Set<String> = []
        for (name, result) in finished {
            let url = try result.get()
            let path = url.standardizedFileURL.resolvingSymlinksInPath().path
            #expect(path.hasPrefix(directory.path + "/"), "\(name)")
            let relative = String(path.dropFirst(directory.path.count + 1))
            for component in relative.split(separator: "/") {
                #expect(!component.hasPrefix("."))
                #expect(component.utf8.count <= 255)
            }
            files.insert(relative)
        }
        #expect(files.count == names.count, "every resource got a file of its own")
        #expect(try target.scratch.contents() == ["received"], "nothing was created beside the directory")
        let everything = FileManager.default.enumerator(atPath: target.directory.path)?.allObjects as? [String] ?? []
        let regular = everything.filter { path in
            var isDirectory: ObjCBool = false
            let full = target.directory.appendingPathComponent(path).path
            return FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        #expect(Set(regular) == files, "nothing but the files reported")
        #expect(!FileManager.default.fileExists(atPath: absolute))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/pc-escape-relative"))
        let escape = try #require(try finished.first { $0.name == "../escape" }?.result.get())
        #expect(try Data(contentsOf: escape) == Data("content 0".utf8))
    }

    @Test("a wrong root digest is answered with RESET 3 and leaves no file")
    func digestMismatch() async throws {
        let target = try await Target()
        defer { target.scratch.remove() }
        target.send(
            channel: 1,
            name: Array("forged.bin".utf8),
            content: Array(repeating: 7, count: 1000),
            digest: Array(repeating: 0, count: 32)
        )
        let reset = await target.socket.readFrame(ofType: 0x23)
        #expect(reset == HandFrames.bigEndian(UInt32(1)) + [3])
        let finished = try await target.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished.first?.result.get() }
        #expect(error == .digestMismatch(peer: error?.peer, name: nil))
        #expect(try target.scratch.contents("received").isEmpty)
    }

    @Test("an END with blocks never sent is answered with RESET 4 and leaves no file")
    func sizeMismatch() async throws {
        let target = try await Target()
        defer { target.scratch.remove() }
        // Announced: two blocks and a byte; sent: the first block only.
        let content = [UInt8](repeating: 1, count: 1 << 20)
        target.socket.send(HandFrames.openResource(channel: 1, size: (2 << 20) + 1, name: Array("short".utf8)))
        // More than the first window: wait for the receiver's answer and its credit.
        #expect(await target.socket.readFrame(ofType: 0x27) != nil)
        #expect(await target.socket.readFrame(ofType: 0x24) != nil)
        target.socket.send(HandFrames.resource(channel: 1, content))
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(1)) + [4])
        let finished = try await target.log.waitForResources(1)
        let error = #expect(throws: TransferError.self) { try finished[0].result.get() }
        #expect(error == .sizeMismatch(peer: error?.peer, name: nil))
        #expect(try target.scratch.contents("received").isEmpty)
        // The connection survives a refused resource: a good one still arrives.
        target.send(channel: 3, name: Array("good".utf8), content: Array("fine".utf8))
        let all = try await target.log.waitForResources(2)
        #expect(try Data(contentsOf: try all[1].result.get()) == Data("fine".utf8))
    }

    @Test("a block that does not match its digest is answered with RESET 9; the blocks checked are offered again")
    func blockMismatch() async throws {
        let target = try await Target()
        defer { target.scratch.remove() }
        var random = SplitMix64(seed: 9)
        let content = (0..<((5 << 20) / 2)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let name = Array("damaged.bin".utf8)
        // Block 1 of three is damaged on its way: its bytes are not those its BLOCK announced.
        var damaged = content
        damaged[(1 << 20) + 7] ^= 0x01
        var frames = HandFrames.resource(channel: 1, damaged)
        let blockOne = HandFrames.block(
            channel: 1,
            index: 1,
            digest: HandFrames.blockDigest(content[(1 << 20)..<(2 << 20)])
        )
        let forged = HandFrames.block(
            channel: 1,
            index: 1,
            digest: HandFrames.blockDigest(damaged[(1 << 20)..<(2 << 20)])
        )
        let at = try #require(Self.range(of: forged, in: frames))
        frames.replaceSubrange(at, with: blockOne)
        target.socket.send(HandFrames.openResource(channel: 1, size: UInt64(content.count), name: name))
        #expect(
            await target.socket.readFrame(ofType: 0x27) == HandFrames.bigEndian(UInt32(1))
                + [UInt8](repeating: 0, count: 32)
        )
        #expect(await target.socket.readFrame(ofType: 0x24) != nil, "the window widened")
        target.socket.send(frames)
        #expect(
            await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(1)) + [9],
            "RESET block mismatch"
        )
        let first = try await target.log.waitForResources(1)
        #expect(throws: TransferError.self) { try first[0].result.get() }
        #expect(
            try target.scratch.contents("received").allSatisfy { $0.hasPrefix(".partial-") },
            "no file under its name"
        )

        // The same resource again: HAVE holds block 0 (and block 2 when it was checked before the
        // RESET went), never block 1; blocks from 1 on cross again.
        target.socket.send(HandFrames.openResource(channel: 3, size: UInt64(content.count), name: name))
        let digest0 = HandFrames.blockDigest(content[0..<(1 << 20)])
        let digest2 = HandFrames.blockDigest(content[(2 << 20)...])
        let have = await target.socket.readFrame(ofType: 0x27)
        #expect(
            have == HandFrames.bigEndian(UInt32(3)) + Array(SHA256.hash(data: digest0)) + [0b001]
                || have == HandFrames.bigEndian(UInt32(3)) + Array(SHA256.hash(data: digest0 + digest2)) + [0b101]
        )
        #expect(await target.socket.readFrame(ofType: 0x24) != nil, "the window widened")
        let all = HandFrames.resource(channel: 3, content)
        let blockTwoStart = try #require(
            Self.range(
                of: HandFrames.block(
                    channel: 3,
                    index: 1,
                    digest: HandFrames.blockDigest(content[(1 << 20)..<(2 << 20)])
                ),
                in: all
            )
        )
        target.socket.send(Array(all[blockTwoStart.lowerBound...]))
        let second = try await target.log.waitForResources(2)
        #expect(try Data(contentsOf: try second[1].result.get()) == Data(content))
        #expect(try target.scratch.contents("received") == ["damaged.bin"], "the partial file and its record are gone")
    }

    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start..<(start + needle.count) }
        }
        return nil
    }

    @Test("a resource announcing 2^64-1 bytes, or more than the maximum, is refused at OPEN with its reason")
    func sizesWithoutSense() async throws {
        let target = try await Target { $0.maximumResourceSize = 1000 }
        defer { target.scratch.remove() }
        target.socket.send(HandFrames.openResource(channel: 1, size: .max, name: Array("huge".utf8)))
        let huge = await target.socket.readFrame(ofType: 0x23)
        // Over the configured maximum, or over the free space: either way refused before anything is written.
        #expect(huge == HandFrames.bigEndian(UInt32(1)) + [6] || huge == HandFrames.bigEndian(UInt32(1)) + [7])
        target.socket.send(HandFrames.openResource(channel: 3, size: 1001, name: Array("big".utf8)))
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(3)) + [6], "RESET too large")
        #expect((try? target.scratch.contents("received")) ?? [] == [], "nothing was written")
        #expect(target.log.startedResources.isEmpty, "a refused resource is never announced to the application")
        // At the maximum it is taken.
        target.send(channel: 5, name: Array("fits".utf8), content: Array(repeating: 9, count: 1000))
        let finished = try await target.log.waitForResources(1)
        #expect((try? finished.first?.result.get()) != nil)
    }

    /// Bytes free where the scratch directories go, if that is below what a resource may announce twice
    /// over (512 GiB): the test below needs two resources of three quarters of it each to be announceable.
    private static let freeForTheTest: UInt64? = {
        let free = FreeSpaceGauge.freeBytes(below: FileManager.default.temporaryDirectory.path)
        return free.flatMap { $0 / 4 * 3 < 512 << 30 ? $0 : nil }
    }()

    @Test(
        "resources arriving together are judged against the free space the others will use: RESET 7 (no space)",
        .enabled(if: freeForTheTest != nil)
    )
    func freeSpaceAtOpen() async throws {
        let target = try await Target()
        defer { target.scratch.remove() }
        let size = try #require(Self.freeForTheTest) / 4 * 3
        // Each fits the free space alone; together they do not. Sent in one write, judged in one turn.
        target.socket.send(
            HandFrames.openResource(channel: 1, size: size, name: Array("first".utf8))
                + HandFrames.openResource(channel: 3, size: size, name: Array("second".utf8))
        )
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(3)) + [7], "RESET no space")
        _ = try await target.log.waitForStartedResources(1)
        #expect(target.log.startedResources.map(\.name) == ["first"], "the first was taken, the second never announced")
    }

    @Test("a resource's place is free by the time its sender reads DONE: one sent right after is taken, 40 in a row")
    func placeFreeAtDone() async throws {
        let target = try await Target { $0.maximumIncomingResources = 1 }
        defer { target.scratch.remove() }
        // One place. Each resource is sent as soon as the last one's DONE is read: a place given back only after
        // DONE went out would now and then refuse the next as busy (RESET 8).
        for index in 0..<40 {
            let channel = UInt32(2 * index + 1)
            target.send(channel: channel, name: Array("r\(index)".utf8), content: [UInt8(index), 1, 2])
            var answer: RawFrame?
            repeat {
                answer = await target.socket.readFrame()
            } while answer.map { $0.type != 0x25 && $0.type != 0x23 } ?? false
            let frame = try #require(answer, "no answer to resource \(index)")
            #expect(frame.type == 0x25, "resource \(index) was answered \(frame.type) \(frame.body), not DONE")
            #expect(Array(frame.body.prefix(4)) == HandFrames.bigEndian(channel))
            if frame.type != 0x25 { break }
        }
        #expect(try await target.log.waitForResources(40).count == 40)
    }

    @Test("more resources at once than the session takes are refused as busy (RESET 8); the others arrive")
    func tooManyAtOnce() async throws {
        let target = try await Target { $0.maximumIncomingResources = 2 }
        defer { target.scratch.remove() }
        // Three opened, none finished: the third finds no place.
        for channel: UInt32 in [1, 3, 5] {
            target.socket.send(HandFrames.openResource(channel: channel, size: 4, name: Array("r\(channel)".utf8)))
        }
        #expect(await target.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(5)) + [8], "RESET busy")
        for channel: UInt32 in [1, 3] {
            target.socket.send(HandFrames.resource(channel: channel, [1, 2, 3, 4]))
        }
        let finished = try await target.log.waitForResources(2)
        #expect(finished.allSatisfy { (try? $0.result.get()) != nil })
        // Their places are free again.
        target.send(channel: 7, name: Array("later".utf8), content: [5, 6])
        #expect(try await target.log.waitForResources(3).count == 3)
    }
}
