import Synchronization

/// A few file descriptors the process holds in reserve while it listens, so that it is never left without one
/// while a listener's accepting is paused for want of them.
///
/// Out of descriptors, a process is not only unable to accept: libdispatch, under Swift concurrency on Linux,
/// opens `/proc/<tid>/stat` every second to size its thread pool whenever work waits, and traps (SIGILL) when
/// that open fails. So when `accept` fails with EMFILE, or an accepted connection leaves no descriptor free beside
/// the reserve, a listener lets go of the reserve, leaving that many descriptors free, and accepts again only once
/// the reserve can be taken back with one descriptor to spare: the process then sits at its limit only between
/// that accept and the pause, never for the pause. One reserve serves every listener of the process, taken when
/// the first one starts.
package final class DescriptorReserve: Sendable {
    /// The process's reserve.
    package static let shared = DescriptorReserve()

    /// How many descriptors the reserve holds: libdispatch's check needs one at a time.
    package static let size = 4

    private let held = Mutex<[Int32]>([])

    private init() {
        _ = refill(spare: 0)
    }

    /// Lets go of the reserve: its descriptors are free for the rest of the process.
    package func release() {
        let descriptors = held.withLock { held in
            defer { held = [] }
            return held
        }
        for descriptor in descriptors { Platform.close(descriptor) }
    }

    /// Makes sure the reserve is held and `spare` more descriptors are free beside it, taking it back if it
    /// was let go of.
    ///
    /// - Parameter spare: descriptors that must be free besides the reserve.
    /// - Returns: whether they are; if not, the reserve holds nothing (what it could open is closed again).
    package func refill(spare: Int) -> Bool {
        held.withLock { held in
            let needed = Self.size - held.count + spare
            var opened: [Int32] = []
            while opened.count < needed, let descriptor = Platform.openPlaceholder() {
                opened.append(descriptor)
            }
            guard opened.count == needed else {
                for descriptor in opened + held { Platform.close(descriptor) }
                held = []
                return false
            }
            for descriptor in opened.suffix(spare) { Platform.close(descriptor) }
            held += opened.prefix(needed - spare)
            return true
        }
    }
}
