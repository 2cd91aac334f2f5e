import Foundation

/// A temporary folder holding the file to send and the child's folder for received resources;
/// removed with everything in it by ``remove()``.
struct ScratchDirectory {
    let url: URL

    /// Where the child receives resources.
    var received: URL { url.appendingPathComponent("received", isDirectory: true) }

    /// Makes the folder, under the system's temporary directory.
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("transfer-bench-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: received, withIntermediateDirectories: true)
    }

    /// Writes a file of `mebibytes` MiB, one random MiB repeated, and flushes it to disk so that its
    /// write-back does not fall into a measurement.
    ///
    /// - Returns: the file.
    func makeFile(mebibytes: Int) throws -> URL {
        let file = url.appendingPathComponent("resource.bin")
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw TransferBenchError("cannot create \(file.path)")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        let block = try RandomBytes.data(count: 1 << 20)
        for _ in 0..<mebibytes {
            try handle.write(contentsOf: block)
        }
        try handle.synchronize()
        return file
    }

    /// Removes the folder and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
