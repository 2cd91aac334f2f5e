/// XXH3-64 with seed 0 and the reference's default 192-byte secret, over bytes taken in pieces of any length.
///
/// The digest equals the reference's `XXH3_64bits` of all the bytes taken, whatever the pieces. Inputs of
/// up to 240 bytes are hashed by the short-input functions; longer ones by the long path, which
/// accumulates 64-byte stripes into eight 64-bit lanes (16 stripes to a block, the lanes scrambled after
/// each block) and ends with the input's last 64 bytes. Like the reference's streaming state, the hasher
/// holds back up to 256 bytes and never accumulates the input's final stripe before `finalize()`; whole
/// stripes of a large piece are read from the caller's memory, not copied. Neither `update(_:)` nor
/// `finalize()` allocates.
package struct XXH3Hasher: Sendable {
    /// The reference's default secret (`XXH3_kSecret`): the key material of every path.
    private static let secret: [UInt8] = [
        0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
        0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
        0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
        0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
        0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
        0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
        0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
        0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
        0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
        0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
        0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
        0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
    ]

    private static let prime32_1: UInt64 = 0x9E37_79B1
    private static let prime32_2: UInt64 = 0x85EB_CA77
    private static let prime32_3: UInt64 = 0xC2B2_AE3D
    private static let prime64_1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime64_2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime64_3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime64_4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime64_5: UInt64 = 0x27D4_EB2F_1656_67C5
    /// The multipliers of the short-input avalanches (`PRIME_MX1`, `PRIME_MX2`).
    private static let mix1: UInt64 = 0x1656_6791_9E37_79F9
    private static let mix2: UInt64 = 0x9FB2_1C65_1E98_DF25

    /// Bytes in a stripe, the long path's unit of input.
    private static let stripeLength = 64
    /// Stripes in a block: each stripe's key starts 8 bytes further into the secret, and the last
    /// 64 bytes of the secret key the scramble.
    private static let stripesPerBlock = 16
    /// The longest input hashed by the short-input functions.
    private static let shortInputLimit = 240
    /// Bytes held back before stripes are accumulated, as in the reference's streaming state.
    private static let bufferLength = 256
    /// Where in the secret the keys of the final stripe, of the merge and of 129-240 bytes' last
    /// 16 bytes start.
    private static let lastStripeKeyOffset = 121
    private static let mergeKeyOffset = 11
    private static let midSizeLastKeyOffset = 119

    /// The long path's eight accumulator lanes.
    private var lanes = SIMD8<UInt64>(
        prime32_3,
        prime64_1,
        prime64_2,
        prime64_3,
        prime64_4,
        prime32_2,
        prime64_5,
        prime32_1
    )
    /// Stripes of the current block already accumulated, 0 to 15.
    private var stripesInBlock = 0
    /// Bytes taken so far.
    private var length: UInt64 = 0
    /// Bytes taken but not accumulated, from the start. Once stripes have been accumulated, the last
    /// 64 bytes hold the last accumulated stripe until unaccumulated bytes overwrite them.
    private var buffer = SIMD32<UInt64>()
    /// How many bytes at the start of `buffer` are taken but not accumulated.
    private var bufferedCount = 0

    /// A hasher with nothing taken yet.
    package init() {}

    /// The digest of `bytes`, at once.
    package static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = XXH3Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Takes the next bytes.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var input = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        length &+= UInt64(remaining)
        let start = bufferedCount
        let bufferLength = Self.bufferLength
        if remaining <= bufferLength - start {
            withUnsafeMutableBytes(of: &buffer) { buffer in
                (buffer.baseAddress! + start).copyMemory(from: input, byteCount: remaining)
            }
            bufferedCount = start + remaining
            return
        }
        // The bytes overflow the buffer: accumulate every whole stripe but the input's last.
        var lanes = self.lanes
        var stripesInBlock = self.stripesInBlock
        Self.secret.withUnsafeBytes { secretBytes in
            let secret = secretBytes.baseAddress!
            withUnsafeMutableBytes(of: &buffer) { bufferBytes in
                let buffer = bufferBytes.baseAddress!
                if start > 0 {
                    let fill = bufferLength - start
                    (buffer + start).copyMemory(from: input, byteCount: fill)
                    input += fill
                    remaining -= fill
                    Self.accumulate(&lanes, &stripesInBlock, buffer, stripes: 4, secret: secret)
                }
                if remaining > bufferLength {
                    let stripes = (remaining - 1) / Self.stripeLength
                    Self.accumulate(&lanes, &stripesInBlock, input, stripes: stripes, secret: secret)
                    input += stripes * Self.stripeLength
                    remaining -= stripes * Self.stripeLength
                    // Keep the last accumulated stripe: the final stripe may need its end.
                    (buffer + bufferLength - Self.stripeLength).copyMemory(
                        from: input - Self.stripeLength,
                        byteCount: Self.stripeLength
                    )
                }
                buffer.copyMemory(from: input, byteCount: remaining)
            }
        }
        self.lanes = lanes
        self.stripesInBlock = stripesInBlock
        bufferedCount = remaining
    }

    /// The digest of every byte taken. The hasher is left as it was, free to take more.
    package func finalize() -> UInt64 {
        let length = length
        let bufferedCount = bufferedCount
        var lanes = lanes
        var stripesInBlock = stripesInBlock
        return Self.secret.withUnsafeBytes { secretBytes in
            let secret = secretBytes.baseAddress!
            return withUnsafeBytes(of: buffer) { bufferBytes in
                if length <= UInt64(Self.shortInputLimit) {
                    return Self.shortDigest(UnsafeRawBufferPointer(rebasing: bufferBytes[..<bufferedCount]), secret)
                }
                let buffer = bufferBytes.baseAddress!
                var lastStripe = SIMD8<UInt64>()
                if bufferedCount >= Self.stripeLength {
                    let stripes = (bufferedCount - 1) / Self.stripeLength
                    Self.accumulate(&lanes, &stripesInBlock, buffer, stripes: stripes, secret: secret)
                    lastStripe = Self.vector(buffer + bufferedCount - Self.stripeLength)
                } else {
                    // The final stripe starts in the last accumulated one, kept at the buffer's end.
                    withUnsafeMutableBytes(of: &lastStripe) { stripe in
                        let earlier = Self.stripeLength - bufferedCount
                        stripe.baseAddress!.copyMemory(from: buffer + Self.bufferLength - earlier, byteCount: earlier)
                        (stripe.baseAddress! + earlier).copyMemory(from: buffer, byteCount: bufferedCount)
                    }
                    lastStripe = withUnsafeBytes(of: lastStripe) { Self.vector($0.baseAddress!) }
                }
                Self.accumulate(&lanes, lastStripe, key: Self.vector(secret + Self.lastStripeKeyOffset))
                var result = length &* Self.prime64_1
                for pair in 0..<4 {
                    let key = Self.mergeKeyOffset + 16 * pair
                    result &+= Self.fold(
                        lanes[2 * pair] ^ Self.word(secret + key),
                        lanes[2 * pair + 1] ^ Self.word(secret + key + 8)
                    )
                }
                return Self.avalanche(result)
            }
        }
    }

    // MARK: - Long path

    /// Accumulates `stripes` whole stripes from `input`, scrambling the lanes whenever a block is complete.
    @inline(__always)
    private static func accumulate(
        _ lanes: inout SIMD8<UInt64>,
        _ stripesInBlock: inout Int,
        _ input: UnsafeRawPointer,
        stripes: Int,
        secret: UnsafeRawPointer
    ) {
        let scrambleKey = vector(secret + stripesPerBlock * 8)
        var accumulator = lanes
        var stripe = stripesInBlock
        var input = input
        var left = stripes
        while left > 0 {
            let run = min(left, stripesPerBlock &- stripe)
            if run == stripesPerBlock {
                // A whole block: a fixed trip count and fixed key offsets.
                for index in 0..<stripesPerBlock {
                    let stripeBytes = vector(input + index &* stripeLength)
                    accumulate(&accumulator, stripeBytes, key: vector(secret + index &* 8))
                }
            } else {
                for index in 0..<run {
                    let stripeBytes = vector(input + index &* stripeLength)
                    accumulate(&accumulator, stripeBytes, key: vector(secret + (stripe &+ index) &* 8))
                }
            }
            input += run &* stripeLength
            left &-= run
            stripe &+= run
            if stripe == stripesPerBlock {
                accumulator ^= accumulator &>> 47
                accumulator ^= scrambleKey
                accumulator &*= SIMD8<UInt64>(repeating: prime32_1)
                stripe = 0
            }
        }
        lanes = accumulator
        stripesInBlock = stripe
    }

    /// Accumulates one stripe: each lane gains the product of its keyed word's halves, and the
    /// neighbouring lane's unkeyed word.
    @inline(__always)
    private static func accumulate(_ lanes: inout SIMD8<UInt64>, _ stripe: SIMD8<UInt64>, key: SIMD8<UInt64>) {
        let keyed = stripe ^ key
        var swapped = stripe
        swapped.evenHalf = stripe.oddHalf
        swapped.oddHalf = stripe.evenHalf
        lanes &+= swapped &+ (keyed & 0xFFFF_FFFF) &* (keyed &>> 32)
    }

    /// Eight little-endian 64-bit words at `pointer`, which needs no alignment.
    @inline(__always)
    private static func vector(_ pointer: UnsafeRawPointer) -> SIMD8<UInt64> {
        var words = pointer.loadUnaligned(as: SIMD8<UInt64>.self)
        #if _endian(big)
            for index in words.indices { words[index] = words[index].byteSwapped }
        #endif
        return words
    }

    // MARK: - Short inputs

    /// The digest of at most 240 bytes.
    private static func shortDigest(_ input: UnsafeRawBufferPointer, _ secret: UnsafeRawPointer) -> UInt64 {
        let count = input.count
        let length = UInt64(count)
        switch count {
        case 0:
            return xxh64Avalanche(word(secret + 56) ^ word(secret + 64))
        case 1...3:
            let combined =
                UInt32(input[0]) << 16 | UInt32(input[count >> 1]) << 24 | UInt32(input[count - 1])
                | UInt32(count) << 8
            let flip = half(secret) ^ half(secret + 4)
            return xxh64Avalanche(UInt64(combined ^ flip))
        case 4...8:
            let base = input.baseAddress!
            let joined = UInt64(half(base)) << 32 &+ UInt64(half(base + count - 4))
            var hash = joined ^ (word(secret + 8) ^ word(secret + 16))
            hash ^= rotate(hash, 49) ^ rotate(hash, 24)
            hash &*= mix2
            hash ^= (hash >> 35) &+ length
            hash &*= mix2
            return hash ^ (hash >> 28)
        case 9...16:
            let base = input.baseAddress!
            let low = word(base) ^ (word(secret + 24) ^ word(secret + 32))
            let high = word(base + count - 8) ^ (word(secret + 40) ^ word(secret + 48))
            return avalanche(length &+ low.byteSwapped &+ high &+ fold(low, high))
        case 17...128:
            // Pairs of 16 bytes from both ends, moving inward.
            let base = input.baseAddress!
            var result = length &* prime64_1
            for pair in 0...((count - 1) / 32) {
                result &+= mix16(base + 16 * pair, secret + 32 * pair)
                result &+= mix16(base + count - 16 * (pair + 1), secret + 32 * pair + 16)
            }
            return avalanche(result)
        default:
            // 129 to 240: the first 128 bytes, then every further whole 16 bytes and the last 16.
            let base = input.baseAddress!
            var result = length &* prime64_1
            for round in 0..<8 {
                result &+= mix16(base + 16 * round, secret + 16 * round)
            }
            var tail = mix16(base + count - 16, secret + midSizeLastKeyOffset)
            for round in 8..<(count / 16) {
                tail &+= mix16(base + 16 * round, secret + 16 * (round - 8) + 3)
            }
            return avalanche(avalanche(result) &+ tail)
        }
    }

    /// 16 bytes of input keyed by 16 bytes of the secret, folded to 64 bits.
    @inline(__always)
    private static func mix16(_ input: UnsafeRawPointer, _ key: UnsafeRawPointer) -> UInt64 {
        fold(word(input) ^ word(key), word(input + 8) ^ word(key + 8))
    }

    // MARK: - Arithmetic

    @inline(__always)
    private static func word(_ pointer: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    private static func half(_ pointer: UnsafeRawPointer) -> UInt32 {
        UInt32(littleEndian: pointer.loadUnaligned(as: UInt32.self))
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 &- bits))
    }

    /// The 128-bit product of `a` and `b`, its halves xored together.
    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.low ^ product.high
    }

    /// XXH3's final mix of already mixed bits.
    @inline(__always)
    private static func avalanche(_ value: UInt64) -> UInt64 {
        var hash = value ^ (value >> 37)
        hash &*= mix1
        return hash ^ (hash >> 32)
    }

    /// XXH64's final mix, which XXH3 uses for inputs of 0 to 3 bytes.
    @inline(__always)
    private static func xxh64Avalanche(_ value: UInt64) -> UInt64 {
        var hash = value ^ (value >> 33)
        hash &*= prime64_2
        hash ^= hash >> 29
        hash &*= prime64_3
        return hash ^ (hash >> 32)
    }
}
