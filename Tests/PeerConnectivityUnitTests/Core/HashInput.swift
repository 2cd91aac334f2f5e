/// Inputs and printing shared by the hashers' tests: a pattern the reference implementation can make too, the
/// digest as the reference prints it, and bytes fed in pieces.
enum HashInput {
    /// Bytes `(i * 31 + 7) mod 256` for i from 0.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    /// Lowercase hex digits, two a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
    }

    /// 16 lowercase hex digits, as the reference prints a 64-bit digest.
    static func hex(_ digest: UInt64) -> String {
        hex(withUnsafeBytes(of: digest.bigEndian) { Array($0) })
    }

    /// Hands `bytes` to `take` as the first `first` bytes (even none), then pieces of `piece` bytes.
    static func inPieces(_ bytes: [UInt8], first: Int, piece: Int, _ take: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes { all in
            take(UnsafeRawBufferPointer(rebasing: all[..<first]))
            var offset = first
            while offset < all.count {
                let end = min(offset + piece, all.count)
                take(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
    }
}
