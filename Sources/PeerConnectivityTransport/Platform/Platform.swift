import PeerConnectivityCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the library asks of the C library beyond SwiftNIO and swift-system, in one place, so that the
/// rest of it imports neither Glibc nor Darwin.
package enum Platform {
    /// The process's soft limit on open file descriptors, or nil when it cannot be read.
    package static var fileDescriptorLimit: Int? {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// `TCP_NOTSENT_LOWAT`'s option name: the kernel reports a socket writable only while fewer unsent bytes
    /// than its value wait.
    package static let tcpNotSentLowWatermark = CInt(TCP_NOTSENT_LOWAT)

    /// `TCP_INFO`'s option name: the kernel's view of a connection (Linux's `struct tcp_info`); nil where the
    /// system has none in that layout.
    package static let tcpInfo: CInt? = {
        #if os(Linux)
            CInt(TCP_INFO)
        #else
            nil
        #endif
    }()

    /// `TCP_CONGESTION`'s option name: a socket's congestion control, by name (Linux); nil where the system
    /// has none.
    package static let tcpCongestion: CInt? = {
        #if os(Linux)
            CInt(TCP_CONGESTION)
        #else
            nil
        #endif
    }()

    /// Whether an accept failed for want of resources (descriptors, buffers, memory), so that accepting
    /// should pause rather than go on failing.
    ///
    /// - Parameter code: the errno the accept set.
    package static func isResourceExhaustion(_ code: Int32) -> Bool {
        [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code)
    }

    /// Whether an accept failed because the process or the system has no file descriptor left.
    ///
    /// - Parameter code: the errno the accept set.
    package static func isOutOfFileDescriptors(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE
    }

    /// Makes `new` a second name (a hard link) of the file at `existing`; never replaces a file.
    ///
    /// - Returns: nil when it did, else the errno (`EEXIST` when `new` exists).
    package static func link(_ existing: String, to new: String) -> Int32? {
        #if canImport(Glibc)
            Glibc.link(existing, new) == 0 ? nil : errno
        #else
            Darwin.link(existing, new) == 0 ? nil : errno
        #endif
    }

    /// Gives `existing` the name `new`, replacing what `new` named (atomically).
    ///
    /// - Returns: whether it did.
    package static func rename(_ existing: String, to new: String) -> Bool {
        #if canImport(Glibc)
            Glibc.rename(existing, new) == 0
        #else
            Darwin.rename(existing, new) == 0
        #endif
    }

    /// Removes the name `path`; a missing file is no error.
    package static func unlink(_ path: String) {
        #if canImport(Glibc)
            _ = Glibc.unlink(path)
        #else
            _ = Darwin.unlink(path)
        #endif
    }

    /// Bytes free for an unprivileged user in the file system that holds `path` (`statvfs`).
    ///
    /// - Returns: nil when `path` cannot be asked (it does not exist, say).
    package static func freeBytes(atPath path: String) -> UInt64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        let (bytes, overflow) = UInt64(status.f_bavail).multipliedReportingOverflow(by: UInt64(status.f_frsize))
        return overflow ? .max : bytes
    }

    /// Inodes (files and directories that can still be made) free for an unprivileged user in the file
    /// system that holds `path` (`statvfs`); zero from a file system that makes them as needed.
    ///
    /// - Returns: nil when `path` cannot be asked (it does not exist, say).
    package static func freeInodes(atPath path: String) -> UInt64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        return UInt64(status.f_favail)
    }

    /// The size of a memory page, in bytes.
    package static let pageSize = UInt64(max(1, sysconf(Int32(_SC_PAGESIZE))))

    /// The text of a small file, such as one under `/proc` or `/sys`: at most `limit` bytes of it, read
    /// with one descriptor and no buffering; nil when it cannot be opened or read.
    package static func contents(ofSmallFileAt path: String, limit: Int = 16_384) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var length = 0
        while length < limit {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + length, limit - length) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            length += count
        }
        return String(decoding: bytes[..<length], as: UTF8.self)
    }

    /// Tells the page cache that a range of a file is not needed soon (written back and dropped);
    /// advice only, and only on Linux.
    ///
    /// - Parameters:
    ///   - descriptor: the open file's descriptor.
    ///   - offset: the range's first byte.
    ///   - length: its length.
    package static func adviseNotNeeded(_ descriptor: Int32, offset: UInt64, length: UInt64) {
        #if os(Linux)
            _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_DONTNEED)
        #endif
    }

    /// A connected pair of local stream sockets (`AF_UNIX`): what one end sends, the other reads, with no
    /// address and no network between them.
    ///
    /// - Returns: the two ends.
    /// - Throws: ``SystemCallError`` when the system has none to give (out of descriptors).
    package static func makeSocketPair() throws(SystemCallError) -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        #if canImport(Glibc)
            let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0
        #else
            let made = socketpair(AF_UNIX, SOCK_STREAM, 0, &ends) == 0
        #endif
        guard made else { throw SystemCallError("socketpair", "", errno) }
        return (ends[0], ends[1])
    }

    /// A socket pair to wake a thread blocked in ``waitReadable(_:_:)``: a byte sent on `write` makes
    /// `read` readable. A send to a pair whose other end is closed fails with EPIPE, never with SIGPIPE.
    ///
    /// - Returns: the two ends, or nil when the system has none to give.
    package static func makeWakePair() -> (read: Int32, write: Int32)? {
        guard let (read, write) = try? makeSocketPair() else { return nil }
        #if !canImport(Glibc)
            var on: Int32 = 1
            _ = setsockopt(write, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return (read, write)
    }

    /// Sends one byte on a wake pair's `write` end; a closed pair is no error.
    package static func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        #if canImport(Glibc)
            _ = send(descriptor, &byte, 1, Int32(MSG_NOSIGNAL))
        #else
            _ = send(descriptor, &byte, 1, 0)
        #endif
    }

    /// Opens `/dev/null` for reading: a descriptor that holds a place and nothing else.
    ///
    /// - Returns: the descriptor; nil when none could be opened (none left, for one).
    package static func openPlaceholder() -> Int32? {
        #if canImport(Glibc)
            let descriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        #else
            let descriptor = Darwin.open("/dev/null", O_RDONLY | O_CLOEXEC)
        #endif
        return descriptor >= 0 ? descriptor : nil
    }

    /// Closes a descriptor this library opened with the C library.
    package static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }

    /// Blocks until one of two descriptors is readable (or closed), retrying on EINTR.
    ///
    /// - Returns: which of them is, or nil when `poll` fails.
    package static func waitReadable(_ first: Int32, _ second: Int32) -> (first: Bool, second: Bool)? {
        var descriptors = [
            pollfd(fd: first, events: Int16(POLLIN), revents: 0),
            pollfd(fd: second, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            #if canImport(Glibc)
                let ready = Glibc.poll(&descriptors, 2, -1)
            #else
                let ready = Darwin.poll(&descriptors, 2, -1)
            #endif
            if ready >= 0 { return (descriptors[0].revents != 0, descriptors[1].revents != 0) }
            if errno != EINTR { return nil }
        }
    }

    /// The bytes of an IP address in text form: 4 for IPv4 (an IPv4-mapped IPv6 address too), 16 for
    /// IPv6 (a scope is left out); nil for anything else.
    ///
    /// - Parameter text: "192.0.2.7", "::ffff:192.0.2.7", "fe80::1%eth0".
    package static func addressBytes(_ text: String) -> [UInt8]? {
        let text = String(IPAddressText.withoutScope(IPAddressText.normalized(text)))
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// The text form of an IP address's bytes (4 or 16 of them); nil for any other count.
    ///
    /// - Parameters:
    ///   - bytes: the address (an IPv4-mapped IPv6 address gives its IPv4 form).
    ///   - interface: the interface the address was learned on: a link-local IPv6 address gets it as its
    ///     scope ("fe80::1%eth0"); 0 for none.
    package static func addressString(_ bytes: [UInt8], interface: UInt32 = 0) -> String? {
        socketAddress(bytes: bytes, port: 0, interface: interface).flatMap(addressText)
    }
}
