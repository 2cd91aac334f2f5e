import CPlatformShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Directory work relative to an open directory (the `*at` calls), so that a path is walked one name at
/// a time and no symbolic link on the way is followed. Names are raw bytes (a file name need not be
/// UTF-8); each must be one path component, without "/" or NUL.
extension Platform {
    /// What a name in a directory is, without following a symbolic link.
    package enum EntryKind: Sendable, Equatable {
        /// A regular file, with its length in bytes.
        case regular(size: UInt64)
        /// A directory.
        case directory
        /// Anything else: a symbolic link, a socket, a FIFO, a device.
        case other
    }

    /// Opens the directory at `path` (following symbolic links, as a path the application chose may),
    /// to be the base of the other calls here.
    ///
    /// - Returns: its descriptor (close it with ``close(_:)``).
    /// - Throws: ``SystemCallError`` when it cannot be opened or is no directory.
    package static func openDirectory(atPath path: String) throws -> Int32 {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open", path, errno) }
        return descriptor
    }

    /// Opens the directory `name` in `directory`, never through a symbolic link.
    ///
    /// - Returns: its descriptor (close it with ``close(_:)``).
    /// - Throws: ``SystemCallError``: `ELOOP` or `ENOTDIR` when `name` is a symbolic link or no
    ///   directory, `ENOENT` when it does not exist.
    package static func openDirectory(_ name: [UInt8], in directory: Int32) throws -> Int32 {
        let descriptor = withName(name) { openat(directory, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard descriptor >= 0 else { throw SystemCallError("openat", name, errno) }
        return descriptor
    }

    /// Opens the path `components` below `directory` in one system call, through no symbolic link and
    /// nowhere outside `directory` (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): a directory
    /// (to be the base of the other calls here) or, with `isDirectory` false, a file for reading, as
    /// ``openFileForReading(_:in:)`` opens it. The same as walking the components one ``openDirectory(_:in:)``
    /// at a time, in one step instead of one for each.
    ///
    /// - Parameters:
    ///   - components: the path's names, each one component (no "/" or NUL), none "." or "..".
    ///   - directory: where the path starts.
    ///   - isDirectory: whether the last component must be a directory.
    /// - Returns: the descriptor, or `nil` when the one step cannot tell: something on the path is missing,
    ///   no directory or a symbolic link, or the system has no `openat2`. The caller then walks the path,
    ///   which says which, and makes or skips what it must.
    package static func openBeneath(_ components: [[UInt8]], in directory: Int32, isDirectory: Bool) -> Int32? {
        guard !components.isEmpty else { return nil }
        var path = components[0]
        for component in components.dropFirst() {
            path.append(0x2F)
            path.append(contentsOf: component)
        }
        let flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (isDirectory ? O_DIRECTORY : O_NONBLOCK)
        let descriptor = withName(path) { pc_open_beneath(directory, $0, flags) }
        return descriptor >= 0 ? descriptor : nil
    }

    /// Opens the regular file `name` in `directory` for reading, never through a symbolic link, without
    /// blocking (`O_NONBLOCK`, which a regular file's reads ignore: a FIFO put in its place does not hang).
    ///
    /// - Returns: its descriptor; the caller checks its type (a FIFO or a device opens too).
    /// - Throws: ``SystemCallError`` (`ELOOP` for a symbolic link).
    package static func openFileForReading(_ name: [UInt8], in directory: Int32) throws -> Int32 {
        let descriptor = withName(name) {
            openat(directory, $0, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        }
        guard descriptor >= 0 else { throw SystemCallError("openat", name, errno) }
        return descriptor
    }

    /// Makes the directory `name` in `directory` (mode 0755 less the umask); never replaces anything.
    ///
    /// - Throws: ``SystemCallError`` (`EEXIST` when the name is taken, whatever by).
    package static func makeDirectory(_ name: [UInt8], in directory: Int32) throws {
        guard withName(name, { mkdirat(directory, $0, 0o755) }) == 0 else {
            throw SystemCallError("mkdirat", name, errno)
        }
    }

    /// Makes `name` in `directory` a second name (a hard link) of the file at `existing`; never
    /// replaces anything, not even a dangling symbolic link.
    ///
    /// - Throws: ``SystemCallError`` (`EEXIST` when the name is taken).
    package static func link(_ existing: String, to name: [UInt8], in directory: Int32) throws {
        guard withName(name, { linkat(AT_FDCWD, existing, directory, $0, 0) }) == 0 else {
            throw SystemCallError("linkat", name, errno)
        }
    }

    /// Moves the file at `existing` to `name` in `directory`, atomically, never replacing anything
    /// (`renameat2` with `RENAME_NOREPLACE`). One step where ``link(_:to:in:)`` and an unlink take two,
    /// each holding a directory's lock.
    ///
    /// - Throws: ``SystemCallError``: `EEXIST` when the name is taken; `EINVAL` or `ENOSYS`
    ///   (``SystemCallError/isUnsupported``) when the file system or the system cannot rename without
    ///   replacing, and nothing was moved.
    package static func moveWithoutReplacing(_ existing: String, to name: [UInt8], in directory: Int32) throws {
        guard withName(name, { pc_rename_noreplace(AT_FDCWD, existing, directory, $0) }) == 0 else {
            throw SystemCallError("renameat2", name, errno)
        }
    }

    /// Moves the directory at `existing` onto the empty directory `name` in `directory` (`renameat`), for
    /// a file system that cannot rename without replacing: the caller made `name` itself, so what it
    /// replaces is that empty directory and nothing else; a directory no longer empty is not replaced.
    ///
    /// - Throws: ``SystemCallError``: `ENOTEMPTY` or `EEXIST` when `name` holds something.
    package static func moveOntoEmptyDirectory(_ existing: String, to name: [UInt8], in directory: Int32) throws {
        guard withName(name, { renameat(AT_FDCWD, existing, directory, $0) }) == 0 else {
            throw SystemCallError("renameat", name, errno)
        }
    }

    /// Removes the directory at `path` and everything below it, entering no symbolic link (a link is
    /// removed, not followed), at most ``maximumRemovalDepth`` directories deep; what cannot be removed
    /// stays. A missing `path` is no error.
    package static func removeTree(atPath path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            unlink(path)
            return
        }
        removeContents(of: descriptor, depth: 0)
        close(descriptor)
        _ = rmdir(path)
    }

    /// How deep ``removeTree(atPath:)`` goes: more than a placed path holds.
    package static let maximumRemovalDepth = 64

    private static func removeContents(of directory: Int32, depth: Int) {
        guard depth < maximumRemovalDepth, let names = try? entryNames(of: directory) else { return }
        for name in names {
            if withName(name, { unlinkat(directory, $0, 0) }) == 0 { continue }
            guard errno == EISDIR || errno == EPERM, let inner = try? openDirectory(name, in: directory) else {
                continue
            }
            removeContents(of: inner, depth: depth + 1)
            close(inner)
            _ = withName(name) { unlinkat(directory, $0, AT_REMOVEDIR) }
        }
    }

    /// What `name` in `directory` is, without following a symbolic link.
    ///
    /// - Throws: ``SystemCallError``.
    package static func entryKind(_ name: [UInt8], in directory: Int32) throws -> EntryKind {
        var status = stat()
        guard withName(name, { fstatat(directory, $0, &status, AT_SYMLINK_NOFOLLOW) }) == 0 else {
            throw SystemCallError("fstatat", name, errno)
        }
        return kind(of: status)
    }

    /// What the open file `descriptor` is.
    ///
    /// - Throws: ``SystemCallError``.
    package static func entryKind(of descriptor: Int32) throws -> EntryKind {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemCallError("fstat", [], errno) }
        return kind(of: status)
    }

    /// The names in `directory`, without "." and "..", in the order the file system gives them.
    ///
    /// - Throws: ``SystemCallError``.
    package static func entryNames(of directory: Int32) throws -> [[UInt8]] {
        let copy = dup(directory)
        guard copy >= 0 else { throw SystemCallError("dup", [], errno) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw SystemCallError("fdopendir", [], code)
        }
        defer { _ = closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                guard errno == 0 else { throw SystemCallError("readdir", [], errno) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                Array(bytes.prefix { $0 != 0 })
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
    }

    private static func kind(of status: stat) -> EntryKind {
        switch status.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): return .regular(size: UInt64(status.st_size))
        case mode_t(S_IFDIR): return .directory
        default: return .other
        }
    }

    /// Calls `body` with `name` as a C string.
    private static func withName<Result>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (name + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
