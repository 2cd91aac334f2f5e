import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bytes of the stream and resource tests, so that every byte that comes back can be checked
/// without keeping what was sent: byte `offset` of stream `index` is a fixed pseudo-random table's byte
/// at `(offset + index × 104,729) mod 1,000,003` (a prime period, so neither 64 KiB chunks nor another
/// stream line up with it). Writing and checking are `memcpy` / `memcmp` against the table.
public struct StreamPattern: Sendable {
    /// The period of the pattern, in bytes (a prime).
    static let period = 1_000_003
    /// The longest piece copied or compared at once.
    static let piece = 1 << 19

    private let table: Table
    /// The same bytes in a buffer of their own, which the library writes to the socket without copying
    /// (``buffer(index:offset:count:)``).
    private let tableBuffer: ByteBuffer

    /// The table's bytes, allocated once and never moved, so that a piece of it can be handed out as `Data`
    /// without a copy (``bytes(index:offset:count:)``).
    private final class Table: @unchecked Sendable {
        // @unchecked: `bytes` is written only in `init` and read-only after; it lives as long as the table.
        let bytes: UnsafeMutableRawBufferPointer

        init(_ values: [UInt8]) {
            bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: values.count, alignment: 64)
            values.withUnsafeBytes { bytes.copyMemory(from: $0) }
        }

        deinit {
            bytes.deallocate()
        }

        func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            try body(UnsafeRawBufferPointer(bytes))
        }
    }

    /// Makes the table (about 1.5 MB): one period of pseudo-random bytes, then its first ``piece`` bytes
    /// again, so that any piece starting within the period can be copied in one go.
    public init() {
        var state: UInt64 = 0xD1B5_4A32_D192_ED03
        var table = (0..<Self.period).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        table += table[0..<Self.piece]
        self.table = Table(table)
        self.tableBuffer = ByteBuffer(bytes: table)
    }

    /// Bytes of stream `index` from `offset` on, at most `count` and at most ``piece``, as a view of the
    /// table: no byte is copied to make it, so a writer hands the library bytes that it copies once, into
    /// its frames. The view is valid while this pattern lives.
    ///
    /// - Parameters:
    ///   - index: the stream (or resource) number.
    ///   - offset: where in the stream the bytes start.
    ///   - count: how many bytes at most.
    /// - Returns: the bytes: `min(count, piece)` of them.
    public func bytes(index: Int, offset: Int, count: Int) -> Data {
        let from = start(index: index, offset: offset)
        return Data(
            bytesNoCopy: table.bytes.baseAddress! + from,
            count: min(count, Self.piece),
            deallocator: .none
        )
    }

    /// The bytes ``bytes(index:offset:count:)`` gives, as a slice of a buffer that holds the table: a
    /// stream's writer hands it to the library, which on a connection in plaintext writes it to the
    /// socket without copying it (the kernel's copy is then the only one on the sender, as iperf3's).
    ///
    /// - Parameters:
    ///   - index: the stream (or resource) number.
    ///   - offset: where in the stream the bytes start.
    ///   - count: how many bytes at most.
    /// - Returns: the bytes: `min(count, piece)` of them.
    package func buffer(index: Int, offset: Int, count: Int) -> ByteBuffer {
        tableBuffer.getSlice(at: start(index: index, offset: offset), length: min(count, Self.piece))!
    }

    private func start(index: Int, offset: Int) -> Int {
        (offset % Self.period + (index % Self.period) * 104_729 % Self.period) % Self.period
    }

    /// Fills `buffer` with the bytes of stream `index` from `offset` on.
    ///
    /// - Parameters:
    ///   - index: the stream (or resource) number.
    ///   - offset: where in the stream the buffer starts.
    ///   - buffer: the bytes to fill.
    public func write(index: Int, offset: Int, into buffer: UnsafeMutableRawBufferPointer) {
        var done = 0
        table.withUnsafeBytes { table in
            while done < buffer.count {
                let length = min(Self.piece, buffer.count - done)
                let from = start(index: index, offset: offset + done)
                _ = memcpy(buffer.baseAddress! + done, table.baseAddress! + from, length)
                done += length
            }
        }
    }

    /// Checks bytes of stream `index` that start at `offset`.
    ///
    /// - Parameters:
    ///   - bytes: the bytes received.
    ///   - index: the stream (or resource) number.
    ///   - offset: where in the stream they start.
    /// - Returns: the index in `bytes` of the first byte that differs, or nil when all are as sent.
    public func firstMismatch(in bytes: UnsafeRawBufferPointer, index: Int, offset: Int) -> Int? {
        var done = 0
        return table.withUnsafeBytes { table -> Int? in
            while done < bytes.count {
                let length = min(Self.piece, bytes.count - done)
                let from = start(index: index, offset: offset + done)
                if memcmp(bytes.baseAddress! + done, table.baseAddress! + from, length) != 0 {
                    for position in 0..<length where bytes[done + position] != table[from + position] {
                        return done + position
                    }
                }
                done += length
            }
            return nil
        }
    }
}
