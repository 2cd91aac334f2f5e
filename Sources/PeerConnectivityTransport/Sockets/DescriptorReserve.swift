/// A few file descriptors a listener holds in reserve, so that the process is never left without one while
/// accepting is paused for want of them.
///
/// Out of descriptors, a process is not only unable to accept: libdispatch, under Swift concurrency on Linux,
/// opens `/proc/<tid>/stat` every second to size its thread pool whenever work waits, and traps (SIGILL) when
/// that open fails. So when `accept` fails with EMFILE the listener lets go of its reserve, leaving that many
/// descriptors free (less one or two an accept NIO already had under way may take), and accepts again only once
/// it can take the reserve back with one descriptor to spare: the process then sits at its limit only between
/// that failed accept and the pause, never for the pause.
package struct DescriptorReserve: ~Copyable {
    /// How many descriptors a listener holds: libdispatch's check needs one at a time.
    package static let size = 4

    private var held: [Int32] = []

    /// Takes the reserve (as much of it as can be had).
    init() {
        _ = refill(spare: 0)
    }

    /// Lets go of the reserve: its descriptors are free for the rest of the process.
    mutating func release() {
        for descriptor in held { Platform.close(descriptor) }
        held = []
    }

    /// Takes the reserve back if `spare` more descriptors are free beside it.
    ///
    /// - Parameter spare: descriptors that must be free besides the reserve.
    /// - Returns: whether it did; if not, it holds nothing (what it could open is closed again).
    mutating func refill(spare: Int) -> Bool {
        var opened: [Int32] = []
        while opened.count < Self.size + spare, let descriptor = Platform.openPlaceholder() {
            opened.append(descriptor)
        }
        guard opened.count == Self.size + spare else {
            for descriptor in opened { Platform.close(descriptor) }
            return false
        }
        for descriptor in opened.suffix(spare) { Platform.close(descriptor) }
        release()
        held = Array(opened.prefix(Self.size))
        return true
    }

    deinit {
        for descriptor in held { Platform.close(descriptor) }
    }
}
