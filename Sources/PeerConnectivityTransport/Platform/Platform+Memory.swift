#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory taken from the kernel directly, for buffers that must go back to it when freed.
///
/// glibc's `malloc` serves a block at or above its mmap threshold with a mapping of its own, and returns it
/// to the kernel when freed; but freeing such a block raises the threshold to its size (up to 32 MiB), so
/// the next blocks of that size come from the heap's arenas, which give memory back only from their top.
/// Large messages being gathered (up to 16 MiB each, freed in any order) then left a process hundreds of
/// MiB larger after the peers that sent them had gone. A mapping of its own is returned whatever happened
/// before, and its pages are taken only as they are written.
extension Platform {
    /// Maps `count` bytes of zeroed, private, anonymous memory (`mmap`): no page is resident until written.
    ///
    /// - Parameter count: the bytes, at least 1.
    /// - Returns: the memory, or nil when the kernel has none to give; release it with ``unmapMemory(_:count:)``.
    package static func mapMemory(_ count: Int) -> UnsafeMutableRawPointer? {
        precondition(count > 0, "a mapping of at least one byte")
        let address = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        return address
    }

    /// Returns memory from ``mapMemory(_:)`` to the kernel (`munmap`): its pages leave the process at once.
    ///
    /// - Parameters:
    ///   - address: what ``mapMemory(_:)`` returned.
    ///   - count: the bytes it was asked for.
    package static func unmapMemory(_ address: UnsafeMutableRawPointer, count: Int) {
        _ = munmap(address, count)
    }
}
