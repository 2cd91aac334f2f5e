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
    /// A mapping of 2 MiB or more asks for transparent huge pages (`madvise(MADV_HUGEPAGE)`), so that filling it
    /// takes a fault every 2 MiB rather than every 4 KiB; the kernel may ignore the hint.
    ///
    /// - Parameter count: the bytes, at least 1.
    /// - Returns: the memory, or nil when the kernel has none to give; release it with ``unmapMemory(_:count:)``.
    package static func mapMemory(_ count: Int) -> UnsafeMutableRawPointer? {
        precondition(count > 0, "a mapping of at least one byte")
        let address = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        #if canImport(Glibc)
            // In 2 MiB pages where the kernel allows them: a 16 MiB message then takes 8 page faults instead of
            // 4,096 as its chunks land on the event loop, and its unmapping frees 8 pages; a hint only.
            if count >= hugePageSize { _ = madvise(address, count, MADV_HUGEPAGE) }
        #endif
        return address
    }

    /// The size of a transparent huge page on the platforms this library runs on (x86-64, arm64 with 4 KiB pages).
    private static let hugePageSize = 2 << 20

    /// Returns memory from ``mapMemory(_:)`` to the kernel (`munmap`): its pages leave the process at once.
    ///
    /// - Parameters:
    ///   - address: what ``mapMemory(_:)`` returned.
    ///   - count: the bytes it was asked for.
    package static func unmapMemory(_ address: UnsafeMutableRawPointer, count: Int) {
        _ = munmap(address, count)
    }
}
