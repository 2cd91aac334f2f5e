#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pipe an event loop reads to learn that it has polled (``LoopWriteTurn``).
extension Platform {
    /// Makes a pipe whose two ends close on `exec` and whose write end never blocks.
    ///
    /// - Returns: the read and the write end, or nil when the process has no descriptors left.
    package static func makeSignalPipe() -> (read: CInt, write: CInt)? {
        var descriptors: [CInt] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return nil }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(descriptors[1], F_SETFL, O_NONBLOCK)
        return (descriptors[0], descriptors[1])
    }

    /// Writes one byte into a signal pipe.
    ///
    /// - Parameter descriptor: its write end.
    /// - Returns: whether a byte waits in the pipe now: written, or the pipe full of unread ones.
    package static func signal(_ descriptor: CInt) -> Bool {
        var byte: UInt8 = 1
        return write(descriptor, &byte, 1) == 1 || errno == EAGAIN
    }
}
