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

    /// Removes the name `path`; a missing file is no error.
    package static func unlink(_ path: String) {
        #if canImport(Glibc)
            _ = Glibc.unlink(path)
        #else
            _ = Darwin.unlink(path)
        #endif
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

    /// The bytes of an IP address in text form: 4 for IPv4, 16 for IPv6; nil for anything else.
    ///
    /// - Parameter text: "192.0.2.7", "fe80::1".
    package static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// The text form of an IP address's bytes (4 or 16 of them); nil for any other count.
    ///
    /// - Parameter bytes: the address.
    package static func addressString(_ bytes: [UInt8]) -> String? {
        let family = bytes.count == 4 ? AF_INET : bytes.count == 16 ? AF_INET6 : -1
        guard family >= 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) != nil }
        return ok ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }
}
