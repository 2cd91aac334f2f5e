import NIOCore
import SystemPackage

/// Where a sent resource's bytes are read from: one file (``FileResourceSource``), or a folder's files
/// as one folder stream (``FolderStreamSource``). Read on the ``FileExecutor``, several blocks at once.
protocol ResourceSource: Sendable {
    /// Reads exactly `length` bytes at `offset` of the resource, appended to `buffer`.
    ///
    /// - Throws: ``POSIXFailure`` when a read fails or the bytes are not there;
    ///   ``TransferError`` when a folder's file changed since it was listed.
    func read(at offset: UInt64, length: Int, into buffer: inout ByteBuffer) throws
    /// Closes what the source holds open; called once, when no read is under way.
    func close()
}

/// A resource read from one open file.
struct FileResourceSource: ResourceSource {
    let descriptor: SystemPackage.FileDescriptor

    func read(at offset: UInt64, length: Int, into buffer: inout ByteBuffer) throws {
        try ResourceFileIO.read(descriptor, at: offset, length: length, into: &buffer)
    }

    func close() {
        try? descriptor.close()
    }
}
