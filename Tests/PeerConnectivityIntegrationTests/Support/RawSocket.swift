import Crypto
import Foundation
import PeerConnectivityCore
import PeerConnectivityTesting

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP client, to speak to an advertiser the way a hostile or broken peer would.
///
/// Its reads block, each on a thread of its own (``onOwnThread(_:)-(()->Result)``), never on the
/// cooperative pool the session under test and every other test need.
final class RawSocket: Sendable {
    let fd: Int32

    /// Connects to 127.0.0.1:`port`; reads give up after `timeout` seconds of silence.
    ///
    /// The default, ``waitLimit``, is long enough for a peer on a loaded machine (the whole suite in parallel on two
    /// CPUs, a build beside it) to answer: only a test that expects silence waits for all of it.
    init(port: Int, timeout: Int = Int(waitLimit.components.seconds)) async throws {
        fd = try await onOwnThread { try Self.connect(port: port, timeout: timeout) }
    }

    /// Connects as ``init(port:timeout:)`` does, blocking the calling thread: for a thread of the test's
    /// own (``onOwnThread(_:)-(()->Result)``) that opens many at once.
    init(blockingConnectTo port: Int, timeout: Int = Int(waitLimit.components.seconds)) throws {
        fd = try Self.connect(port: port, timeout: timeout)
    }

    deinit {
        close(fd)
    }

    private static func connect(port: Int, timeout: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Reads from now on give up after `timeout` of silence (at least a millisecond).
    func setReadTimeout(_ timeout: Duration) {
        let microseconds = max(
            1000,
            timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000
        )
        var value = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    }

    /// Reads exactly `count` bytes, or nil on close, error or the timeout's silence.
    func receive(count: Int) async -> [UInt8]? {
        await onOwnThread { self.receiveBlocking(count: count) }
    }

    /// Reads the next frame: its type byte and body; nil on close, error or the timeout's silence.
    func readFrame() async -> RawFrame? {
        await onOwnThread { self.readFrameBlocking() }
    }

    /// Reads frames until one of `type` arrives, skipping others (KEEPALIVE, CREDIT, ...).
    func readFrame(ofType type: UInt8) async -> [UInt8]? {
        await onOwnThread { self.readFrameBlocking(ofType: type) }
    }

    /// Reads until the peer closes (returns everything read) or the timeout passes without data (returns nil).
    func readUntilClosed() async -> [UInt8]? {
        await onOwnThread { self.readUntilClosedBlocking() }
    }

    private func receiveBlocking(count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if got <= 0 { return nil }
            filled += got
        }
        return bytes
    }

    private func readFrameBlocking() -> RawFrame? {
        guard let prefix = receiveBlocking(count: 4) else { return nil }
        let length = Int(prefix.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length >= 1, let frame = receiveBlocking(count: length) else { return nil }
        return RawFrame(type: frame[0], body: Array(frame.dropFirst()))
    }

    /// ``readFrame(ofType:)``, blocking the calling thread: for a thread of the test's own.
    func readFrameBlocking(ofType type: UInt8) -> [UInt8]? {
        while let frame = readFrameBlocking() {
            if frame.type == type { return frame.body }
        }
        return nil
    }

    private func readUntilClosedBlocking() -> [UInt8]? {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count == 0 { return all }
            if count < 0 { return errno == ECONNRESET ? all : nil }
            all += buffer[0..<count]
        }
    }
}

/// A frame as read from a ``RawSocket``: its type byte and its body.
struct RawFrame: Sendable {
    var type: UInt8
    var body: [UInt8]
}

/// Frames written by hand, as the wire format says (docs/PROTOCOL.md).
enum HandFrames {
    static func frame(type: UInt8, body: [UInt8]) -> [UInt8] {
        let length = UInt32(1 + body.count)
        return withUnsafeBytes(of: length.bigEndian) { Array($0) } + [type] + body
    }

    /// A HELLO of this protocol version (no fields); `encryption` 0 (none) keeps the connection plain.
    static func hello(name: String = "mallory", id: UUID = UUID(), encryption: UInt8 = 0) -> [UInt8] {
        let uuid = withUnsafeBytes(of: id.uuid) { Array($0) }
        let nameBytes = Array(name.utf8)
        return frame(
            type: 0x01,
            body: [0x50, 0x43, 0x4F, 0x4E] + withUnsafeBytes(of: WireProtocol.version.bigEndian, Array.init) + uuid + [
                UInt8(nameBytes.count)
            ] + nameBytes + [encryption, 0]
        )
    }

    /// The fields of an INVITE or ACCEPT: the largest message the sender accepts, and the XXH3 capability
    /// (type 4) when `hashesBlocksWithXXH3`.
    static func fields(maximumMessageLength: UInt32 = 1 << 20, hashesBlocksWithXXH3: Bool = false) -> [UInt8] {
        hashesBlocksWithXXH3
            ? [2, 1, 0, 4] + bigEndian(maximumMessageLength) + [4, 0, 0]
            : [1, 1, 0, 4] + bigEndian(maximumMessageLength)
    }

    /// An INVITE; by default the invitation waits ``waitLimit`` for the application's answer, room for a
    /// loaded machine whose acceptor runs late.
    static func invite(
        context: [UInt8] = [],
        timeoutMilliseconds: UInt32 = UInt32(waitLimit.components.seconds * 1_000),
        maximumMessageLength: UInt32 = 1 << 20,
        hashesBlocksWithXXH3: Bool = false
    ) -> [UInt8] {
        frame(
            type: 0x02,
            body: bigEndian(timeoutMilliseconds)
                + fields(maximumMessageLength: maximumMessageLength, hashesBlocksWithXXH3: hashesBlocksWithXXH3)
                + context
        )
    }

    static func data(_ bytes: [UInt8]) -> [UInt8] { frame(type: 0x10, body: bytes) }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// OPEN of a resource channel.
    static func openResource(channel: UInt32, size: UInt64, name: [UInt8]) -> [UInt8] {
        frame(type: 0x20, body: bigEndian(channel) + [2] + bigEndian(size) + name)
    }

    /// OPEN of a folder channel (kind 4) whose folder stream is `size` bytes.
    static func openFolder(channel: UInt32, size: UInt64, name: [UInt8]) -> [UInt8] {
        frame(type: 0x20, body: bigEndian(channel) + [4] + bigEndian(size) + name)
    }

    /// A folder stream: for each file, its path's length (UInt16), its length (UInt64), the path, the bytes.
    static func folderStream(_ files: [(path: [UInt8], content: [UInt8])]) -> [UInt8] {
        files.flatMap { bigEndian(UInt16($0.path.count)) + bigEndian(UInt64($0.content.count)) + $0.path + $0.content }
    }

    static func chunk(channel: UInt32, _ bytes: [UInt8]) -> [UInt8] {
        frame(type: 0x21, body: bigEndian(channel) + bytes)
    }

    static func end(channel: UInt32, digest: [UInt8]) -> [UInt8] {
        frame(type: 0x22, body: bigEndian(channel) + digest)
    }

    static func block(channel: UInt32, index: UInt32, digest: [UInt8]) -> [UInt8] {
        frame(type: 0x26, body: bigEndian(channel) + bigEndian(index) + digest)
    }

    /// A resource as the protocol sends it after HAVE: each 1 MiB block as BLOCK (its digest of `kind`, or
    /// `blockDigest` for block 0 when given) and CHUNKs of at most 64 KiB, then END with the root
    /// (or `root` when given).
    static func resource(
        channel: UInt32,
        _ content: [UInt8],
        kind: BlockDigestKind = .xxh64,
        blockDigest: [UInt8]? = nil,
        root: [UInt8]? = nil
    ) -> [UInt8] {
        let blockLength = 1 << 20
        var frames: [UInt8] = []
        var digests: [[UInt8]] = []
        var offset = 0
        while offset < content.count {
            let block = Array(content[offset..<min(offset + blockLength, content.count)])
            let digest = Self.blockDigest(block, kind)
            digests.append(digest)
            frames += self.block(
                channel: channel,
                index: UInt32(offset / blockLength),
                digest: offset == 0 ? blockDigest ?? digest : digest
            )
            var chunkStart = 0
            while chunkStart < block.count {
                frames += chunk(channel: channel, Array(block[chunkStart..<min(chunkStart + (1 << 16), block.count)]))
                chunkStart += 1 << 16
            }
            offset += blockLength
        }
        return frames + end(channel: channel, digest: root ?? rootDigest(size: UInt64(content.count), digests: digests))
    }

    /// A block's digest as BLOCK carries it: XXH64 (a peer without the XXH3 capability), or `kind`; 8 bytes
    /// big-endian.
    static func blockDigest<Bytes: Sequence<UInt8>>(_ block: Bytes, _ kind: BlockDigestKind = .xxh64) -> [UInt8] {
        Array(block).withUnsafeBytes { BlockHasher.digest($0, kind) }
    }

    /// The root of a resource of `size` bytes whose blocks hash to `digests`.
    static func rootDigest(size: UInt64, digests: [[UInt8]]) -> [UInt8] {
        var input = bigEndian(size) + bigEndian(UInt32(1 << 20))
        for digest in digests { input += digest }
        return Array(SHA256.hash(data: input))
    }
}
