import PeerConnectivityTransport
import Synchronization

/// The free space of the file system that holds a session's resource directory, for the check at a
/// resource's OPEN, without asking the file system for every resource (a `statfs` on the event loop, for
/// each of a folder's small files). A reading is used for ``readingLifetime`` (250 ms); each resource it admits in
/// that time is taken off it, so resources arriving together are judged against what the others will use.
final class FreeSpaceGauge: Sendable {
    /// How long a reading of the file system is used, unless told otherwise.
    static let defaultReadingLifetime: Duration = .milliseconds(250)

    private struct Reading {
        /// The bytes free at the reading, less those of the resources admitted since.
        var free: UInt64
        var taken: ContinuousClock.Instant
    }

    private let directoryPath: String
    /// How long a reading of the file system is used.
    let readingLifetime: Duration
    /// Asks the file system for the bytes free below a path: ``freeBytes(below:)`` but in tests, where a
    /// file system other processes write to cannot give the same answer twice.
    private let read: @Sendable (String) -> UInt64?
    private let reading = Mutex<Reading?>(nil)

    /// A gauge of the file system of the directory at `directoryPath`, or of its nearest existing parent.
    init(
        directoryPath: String,
        readingLifetime: Duration = defaultReadingLifetime,
        read: @escaping @Sendable (String) -> UInt64? = FreeSpaceGauge.freeBytes(below:)
    ) {
        self.directoryPath = directoryPath
        self.readingLifetime = readingLifetime
        self.read = read
    }

    private enum Verdict {
        case fits
        case tooLarge(free: UInt64)
    }

    /// Whether `size` more bytes fit; if they do, they are taken off the reading.
    ///
    /// - Returns: `nil` when they fit (or the file system cannot be asked), else the bytes free.
    func refuses(_ size: UInt64) -> UInt64? {
        let now = ContinuousClock.now
        var verdict = reading.withLock { take(size, from: &$0, at: now) }
        if verdict == nil {
            // No reading, or an old one: asked outside the lock (another OPEN may ask at the same moment).
            let free = read(directoryPath)
            verdict = reading.withLock { reading in
                guard let free else {
                    reading = nil
                    return .fits
                }
                // A reading just made judges, however short the lifetime.
                reading = Reading(free: free, taken: now)
                return take(size, from: &reading, at: now, checkingAge: false)
            }
        }
        guard case .tooLarge(let free) = verdict else { return nil }
        return free
    }

    /// Takes `size` off a reading young enough; `nil` when there is none.
    private func take(
        _ size: UInt64,
        from reading: inout Reading?,
        at now: ContinuousClock.Instant,
        checkingAge: Bool = true
    ) -> Verdict? {
        guard var current = reading, !checkingAge || now - current.taken < readingLifetime else { return nil }
        guard size <= current.free else { return .tooLarge(free: current.free) }
        current.free -= size
        reading = current
        return .fits
    }

    /// Bytes free for an unprivileged user in the file system of the directory at `path`, or of its
    /// nearest existing parent; `nil` when none can be asked.
    static func freeBytes(below path: String) -> UInt64? {
        var path = path
        for _ in 0..<64 {
            if let free = Platform.freeBytes(atPath: path) { return free }
            guard let slash = path.lastIndex(of: "/"), path != "/" else { return nil }
            path = slash == path.startIndex ? "/" : String(path[..<slash])
        }
        return nil
    }
}
