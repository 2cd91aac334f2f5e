import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The size and SHA-256 of a file, read in 1 MiB blocks (never whole).
public struct FileDigest: Hashable, Sendable {
    /// The file's size in bytes.
    public var size: Int
    /// Its SHA-256, 64 lowercase hexadecimal digits.
    public var sha256: String

    /// Makes a digest of known values.
    ///
    /// - Parameters:
    ///   - size: bytes.
    ///   - sha256: hexadecimal SHA-256.
    public init(size: Int, sha256: String) {
        self.size = size
        self.sha256 = sha256
    }

    /// Reads a file and hashes it, 1 MiB a system call into one buffer. (`FileHandle.read(upToCount:)` on
    /// Linux reads 4 KiB a call: 262,144 calls for the reflector's check of a 1 GiB resource.)
    ///
    /// - Parameter url: a local file.
    /// - Throws: `POSIXError` when the file cannot be opened or read.
    public init(of url: URL) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        var size = 0
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            size += count
        }
        self.init(size: size, sha256: Self.hex(hasher.finalize()))
    }

    /// Writes `size` bytes of ``StreamPattern`` stream `index` to a new file and hashes them on the way.
    ///
    /// - Parameters:
    ///   - url: where; the file must not exist.
    ///   - size: bytes.
    ///   - index: the pattern's stream number.
    ///   - pattern: the pattern.
    /// - Returns: the file's digest.
    /// - Throws: when the file cannot be created or written.
    public static func writePatternFile(at url: URL, size: Int, index: Int, pattern: StreamPattern) throws -> FileDigest
    {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        var block = Data(count: 1 << 20)
        var offset = 0
        while offset < size {
            let length = min(block.count, size - offset)
            block.withUnsafeMutableBytes { buffer in
                pattern.write(
                    index: index,
                    offset: offset,
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
                )
            }
            let piece = length == block.count ? block : block.prefix(length)
            hasher.update(data: piece)
            try handle.write(contentsOf: piece)
            offset += length
        }
        return FileDigest(size: size, sha256: hex(hasher.finalize()))
    }

    /// Whether `url` names a regular file (a symbolic link to one counts).
    ///
    /// - Parameter url: a local path.
    /// - Returns: `false` for a folder, a device, a socket, or a path that names nothing.
    public static func isRegularFile(_ url: URL) -> Bool {
        var status = stat()
        return stat(url.path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
