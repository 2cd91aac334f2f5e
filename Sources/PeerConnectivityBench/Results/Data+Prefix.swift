import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension UnsafeRawBufferPointer {
    /// Whether these bytes begin with `prefix`'s, in one `memcmp`: the one comparison behind both
    /// `begins(with:)` below and `Data.begins(with:)`.
    ///
    /// - Parameter prefix: the bytes to look for.
    /// - Returns: true when the first `prefix.count` bytes are `prefix`'s (always for an empty prefix).
    package func begins(with prefix: UnsafeRawBufferPointer) -> Bool {
        guard count >= prefix.count else { return false }
        guard let start = baseAddress, let wanted = prefix.baseAddress else { return true }
        return memcmp(start, wanted, prefix.count) == 0
    }

    /// Whether these bytes begin with `prefix`.
    ///
    /// For the messages of the round trip's path: their bytes are held once and every prefix is asked of them,
    /// with the prefixes as arrays, whose bytes (unlike a `Data`'s) take no runtime exclusivity check to reach.
    ///
    /// - Parameter prefix: the bytes to look for.
    /// - Returns: true when the first `prefix.count` bytes are `prefix`'s (always for an empty prefix).
    package func begins(with prefix: [UInt8]) -> Bool {
        prefix.withUnsafeBytes { begins(with: $0) }
    }
}

extension Data {
    /// Whether these bytes begin with `prefix`'s, in one `memcmp`.
    ///
    /// The tools tell their control messages from the test's payloads by prefix; `starts(with:)` walks both
    /// through `Data`'s iterators a byte at a time, about 800 instructions a call for a 64-byte message, where
    /// this takes a few dozen.
    ///
    /// - Parameter prefix: the bytes to look for.
    /// - Returns: true when the first `prefix.count` bytes are `prefix`'s (always for an empty prefix).
    package func begins(with prefix: Data) -> Bool {
        withUnsafeBytes { bytes in prefix.withUnsafeBytes { bytes.begins(with: $0) } }
    }
}
