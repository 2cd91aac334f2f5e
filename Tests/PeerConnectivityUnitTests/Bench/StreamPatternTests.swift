import Foundation
import PeerConnectivityTesting
import Testing

@testable import PeerConnectivityBench

@Suite("Stream pattern and file digests")
struct StreamPatternTests {
    let pattern = StreamPattern()

    func bytes(index: Int, offset: Int, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        buffer.withUnsafeMutableBytes { pattern.write(index: index, offset: offset, into: $0) }
        return buffer
    }

    @Test("bytes depend on stream and offset only: any cut of a stream checks out, others do not")
    func roundTrip() {
        let whole = bytes(index: 3, offset: 0, count: 3 << 20)
        let cut = bytes(index: 3, offset: 990_000, count: 100_000) == Array(whole[990_000..<1_090_000])
        #expect(cut, "a cut across the period differs from the same bytes of the whole stream")
        #expect(whole.withUnsafeBytes { pattern.firstMismatch(in: $0, index: 3, offset: 0) } == nil)
        let piece = Array(whole[65_536..<131_072])
        #expect(piece.withUnsafeBytes { pattern.firstMismatch(in: $0, index: 3, offset: 65_536) } == nil)
        #expect(piece.withUnsafeBytes { pattern.firstMismatch(in: $0, index: 3, offset: 0) } != nil)
        #expect(piece.withUnsafeBytes { pattern.firstMismatch(in: $0, index: 4, offset: 65_536) } != nil)
        #expect(Set(whole).count > 200, "not a constant")
    }

    @Test("the first wrong byte is found")
    func mismatch() {
        var chunk = bytes(index: 0, offset: 500, count: 70_000)
        chunk[68_001] ^= 0x01
        #expect(chunk.withUnsafeBytes { pattern.firstMismatch(in: $0, index: 0, offset: 500) } == 68_001)
    }

    @Test("a pattern file's digest is the digest of reading it back")
    func fileDigest() throws {
        let folder = try ScratchDirectory("results").url
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("file")
        let written = try FileDigest.writePatternFile(at: url, size: 2_500_000, index: 0, pattern: pattern)
        #expect(written.size == 2_500_000 && written.sha256.count == 64)
        #expect(try FileDigest(of: url) == written)
        let empty = folder.appendingPathComponent("empty")
        let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        #expect(try FileDigest.writePatternFile(at: empty, size: 0, index: 0, pattern: pattern).sha256 == emptySHA256)
        #expect(try FileDigest(of: empty) == FileDigest(size: 0, sha256: emptySHA256))
        #expect(throws: POSIXError.self) { try FileDigest(of: folder.appendingPathComponent("missing")) }
    }

    @Test("a resource confirmation and a stream receipt are read back; anything else is not one")
    func confirmation() {
        let receipt = StreamReceipt(name: "bench-oneway-0", bytes: 9, firstMismatchOffset: 3)
        #expect(StreamReceipt(decoding: receipt.encoded()) == receipt)
        #expect(StreamReceipt(decoding: ResourceConfirmation(name: "r", size: 1, sha256: nil).encoded()) == nil)
        let confirmation = ResourceConfirmation(name: "r", size: 5, sha256: String(repeating: "a", count: 64))
        #expect(ResourceConfirmation(decoding: confirmation.encoded()) == confirmation)
        #expect(ResourceConfirmation(decoding: Data("pc-bench-hello\n{}".utf8)) == nil)
    }
}
