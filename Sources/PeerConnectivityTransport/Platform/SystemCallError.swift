import PeerConnectivityCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A system call that failed: which, on what name, and its errno.
package struct SystemCallError: Error, Hashable, CustomStringConvertible {
    /// The call ("openat", "mkdirat", ...).
    package let call: String
    /// The name or path it was given, as text (invalid UTF-8 repaired); empty when it took none.
    package let name: String
    /// The errno it set.
    package let code: Int32

    /// - Parameters:
    ///   - call: the call.
    ///   - name: the name it was given, as raw bytes.
    ///   - code: the errno it set.
    package init(_ call: String, _ name: [UInt8], _ code: Int32) {
        self.init(call, String(decoding: name, as: UTF8.self), code)
    }

    /// - Parameters:
    ///   - call: the call.
    ///   - name: the name or path it was given.
    ///   - code: the errno it set.
    package init(_ call: String, _ name: String, _ code: Int32) {
        self.call = call
        self.name = name
        self.code = code
    }

    /// Whether the name was taken (`EEXIST`).
    package var isNameTaken: Bool { code == EEXIST }
    /// Whether the name does not exist (`ENOENT`).
    package var isMissing: Bool { code == ENOENT }
    /// Whether the name is a symbolic link or no directory where a directory was asked for
    /// (`ELOOP`, `ENOTDIR`).
    package var isNotDirectory: Bool { code == ELOOP || code == ENOTDIR }
    /// Whether the call is not supported for this file system or on this system (`EINVAL`, `ENOSYS`,
    /// `ENOTSUP`).
    package var isUnsupported: Bool { code == EINVAL || code == ENOSYS || code == ENOTSUP }
    /// Whether a directory to be replaced holds something (`ENOTEMPTY`).
    package var isNotEmpty: Bool { code == ENOTEMPTY }
    /// Whether the name is a symbolic link opened with `O_NOFOLLOW` (`ELOOP`).
    package var isSymbolicLink: Bool { code == ELOOP }

    /// "openat photos: Too many levels of symbolic links (errno 40)"; the name escaped for a log.
    package var description: String {
        let what = name.isEmpty ? call : "\(call) \"\(LogSafe.escaped(name, limit: 80))\""
        return "\(what): \(String(cString: strerror(code))) (errno \(code))"
    }
}
