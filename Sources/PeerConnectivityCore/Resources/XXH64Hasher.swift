/// XXH64 with seed 0, taken in pieces of any length: the block digest of a connection whose peer does not
/// hash blocks with XXH3-64 (``BlockDigestKind/xxh64``), and of protocol versions before that capability.
///
/// XXH64 runs at more than ten times SHA-256's speed on one core, which on a machine with few cores is
/// the difference between hashing and moving data (docs/PROTOCOL.md, "Why XXH64 per 1 MiB block").
package struct XXH64Hasher: Sendable {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The four lanes, each taking every fourth 8-byte word of each 32-byte stripe.
    private var lanes: (UInt64, UInt64, UInt64, UInt64)
    /// Bytes taken so far.
    private var length: UInt64 = 0
    /// The bytes of an unfinished stripe, at most 31.
    private var tail: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var tailCount = 0

    /// A hasher with nothing taken yet.
    package init() {
        lanes = (Self.prime1 &+ Self.prime2, Self.prime2, 0, 0 &- Self.prime1)
    }

    /// The digest of `bytes`, at once.
    package static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = XXH64Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Takes the next bytes of the block.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if tailCount > 0 {
            let taken = min(32 - tailCount, bytes.count)
            let start = tailCount
            withUnsafeMutableBytes(of: &tail) { tail in
                tail.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!, byteCount: taken)
            }
            tailCount += taken
            offset = taken
            guard tailCount == 32 else { return }
            let stripe = tail
            withUnsafeBytes(of: stripe) { consumeStripes($0, count: 1) }
            tailCount = 0
        }
        let stripes = (bytes.count - offset) / 32
        if stripes > 0 {
            consumeStripes(UnsafeRawBufferPointer(rebasing: bytes[offset...]), count: stripes)
            offset += stripes * 32
        }
        let left = bytes.count - offset
        if left > 0 {
            withUnsafeMutableBytes(of: &tail) { tail in
                tail.baseAddress!.copyMemory(from: bytes.baseAddress!.advanced(by: offset), byteCount: left)
            }
            tailCount = left
        }
    }

    /// The digest of every byte taken.
    package func finalize() -> UInt64 {
        var hash: UInt64
        if length >= 32 {
            hash =
                Self.rotate(lanes.0, 1) &+ Self.rotate(lanes.1, 7) &+ Self.rotate(lanes.2, 12)
                &+ Self.rotate(lanes.3, 18)
            hash = Self.merge(hash, lanes.0)
            hash = Self.merge(hash, lanes.1)
            hash = Self.merge(hash, lanes.2)
            hash = Self.merge(hash, lanes.3)
        } else {
            hash = Self.prime5
        }
        hash &+= length
        withUnsafeBytes(of: tail) { tail in
            var offset = 0
            while offset + 8 <= tailCount {
                hash ^= Self.round(0, Self.word(tail, offset))
                hash = Self.rotate(hash, 27) &* Self.prime1 &+ Self.prime4
                offset += 8
            }
            if offset + 4 <= tailCount {
                let word = UInt32(littleEndian: tail.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                hash ^= UInt64(word) &* Self.prime1
                hash = Self.rotate(hash, 23) &* Self.prime2 &+ Self.prime3
                offset += 4
            }
            while offset < tailCount {
                hash ^= UInt64(tail[offset]) &* Self.prime5
                hash = Self.rotate(hash, 11) &* Self.prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash &*= Self.prime2
        hash ^= hash >> 29
        hash &*= Self.prime3
        hash ^= hash >> 32
        return hash
    }

    private mutating func consumeStripes(_ bytes: UnsafeRawBufferPointer, count: Int) {
        var (lane0, lane1, lane2, lane3) = lanes
        var offset = 0
        for _ in 0..<count {
            lane0 = Self.round(lane0, Self.word(bytes, offset))
            lane1 = Self.round(lane1, Self.word(bytes, offset + 8))
            lane2 = Self.round(lane2, Self.word(bytes, offset + 16))
            lane3 = Self.round(lane3, Self.word(bytes, offset + 24))
            offset += 32
        }
        lanes = (lane0, lane1, lane2, lane3)
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 &- bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        (accumulator ^ round(0, lane)) &* prime1 &+ prime4
    }
}
