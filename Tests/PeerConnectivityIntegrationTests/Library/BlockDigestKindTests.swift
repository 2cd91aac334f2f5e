import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivity

/// A hand-written peer sends resources to a real session, with and without the XXH3 capability in its
/// INVITE: the session's ACCEPT offers it, and each block is checked with the hash the connection agreed
/// on, so that digests of the other hash are damage.
@Suite("Block digest kinds", .serialized, .timeLimit(.minutes(1 * slowdown)))
struct BlockDigestKindTests {
    /// Two blocks and a little of a third, the last one short: the hash's long and short inputs both.
    private static let content: [UInt8] = (0..<(2 << 20) + 1_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }

    /// A session receiving into a scratch directory, joined by a raw peer that offers XXH3-64 or not.
    private static func joined(offeringXXH3: Bool) async throws -> (ScratchDirectory, RawJoinedSession) {
        let scratch = try ScratchDirectory("digest-kinds")
        var configuration = Session.Configuration.patient
        configuration.resourceDirectory = scratch.url.appendingPathComponent("received", isDirectory: true)
        let joined = try await RawJoinedSession(
            "digest-kinds",
            configuration: configuration,
            hashesBlocksWithXXH3: offeringXXH3
        )
        return (scratch, joined)
    }

    /// Sends OPEN, waits for the session's HAVE (nothing held) and its window, then sends the blocks with
    /// digests of `kind`.
    private static func send(_ kind: BlockDigestKind, channel: UInt32, name: String, to socket: RawSocket) async {
        socket.send(HandFrames.openResource(channel: channel, size: UInt64(content.count), name: Array(name.utf8)))
        #expect(
            await socket.readFrame(ofType: 0x27) == HandFrames.bigEndian(channel) + [UInt8](repeating: 0, count: 32),
            "HAVE: nothing held"
        )
        #expect(await socket.readFrame(ofType: 0x24) != nil, "the window widened")
        socket.send(HandFrames.resource(channel: channel, content, kind: kind))
    }

    /// Whether an ACCEPT's body (its fields) holds the XXH3 capability: type 4, length 0.
    private static func offersXXH3(_ accept: [UInt8]?) throws -> Bool {
        let body = try #require(accept)
        var offset = 1
        for _ in 0..<Int(try #require(body.first)) {
            try #require(offset + 3 <= body.count, "a field runs past the ACCEPT")
            let length = Int(body[offset + 1]) << 8 | Int(body[offset + 2])
            if body[offset] == 4 { return length == 0 }
            offset += 3 + length
        }
        return false
    }

    @Test(
        "the session offers XXH3-64 to every peer; a peer's blocks land with the hash it agreed on, the other is damage",
        arguments: [(true, BlockDigestKind.xxh3, BlockDigestKind.xxh64), (false, .xxh64, .xxh3)]
    )
    func blocksOfTheAgreedKind(offeringXXH3: Bool, agreed: BlockDigestKind, other: BlockDigestKind) async throws {
        let (scratch, joined) = try await Self.joined(offeringXXH3: offeringXXH3)
        defer { scratch.remove() }
        #expect(try Self.offersXXH3(joined.accept), "the session's ACCEPT offers XXH3-64")

        await Self.send(agreed, channel: 1, name: "agreed.bin", to: joined.socket)
        let first = try await joined.log.waitForResources(1)
        #expect(try Data(contentsOf: try first[0].result.get()) == Data(Self.content))

        await Self.send(other, channel: 3, name: "other.bin", to: joined.socket)
        #expect(
            await joined.socket.readFrame(ofType: 0x23) == HandFrames.bigEndian(UInt32(3)) + [9],
            "RESET block mismatch"
        )
        let second = try await joined.log.waitForResources(2)
        #expect(throws: TransferError.self) { try second[1].result.get() }
        await joined.stop()
    }
}
