import Foundation

/// Bytes to send: random, so that nothing on the way could shortcut repeated content.
enum RandomBytes {
    /// `count` bytes from /dev/urandom (a few reads, not one system call per byte).
    ///
    /// - Throws: when /dev/urandom cannot be read.
    static func data(count: Int) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: "/dev/urandom") else {
            throw TransferBenchError("cannot open /dev/urandom")
        }
        defer { try? handle.close() }
        var data = Data()
        while data.count < count, let more = try handle.read(upToCount: count - data.count), !more.isEmpty {
            data.append(more)
        }
        guard data.count == count else { throw TransferBenchError("/dev/urandom gave \(data.count) of \(count) bytes") }
        return data
    }
}
