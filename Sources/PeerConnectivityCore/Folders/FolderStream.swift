/// The bytes of a folder channel (``ChannelKind/folder``): its files one after the other, each an
/// entry of a header and the file's bytes. The stream is cut into blocks and checked as a resource is
/// (``ResourceLayout``); an entry may start and end anywhere in a block.
///
/// An entry's header: the path's length (UInt16, big endian), the file's length (UInt64), then the
/// path, 1-``maximumPathLength`` bytes of UTF-8, its components below the folder joined by "/". The
/// receiver checks the path as it checks a resource's name (no climbing, safe components).
package enum FolderStream {
    /// The longest path an entry may have, in bytes.
    package static let maximumPathLength = 1024
    /// The bytes before an entry's path: its path's length and its file's length.
    package static let fixedHeaderLength = 2 + 8

    /// The bytes of an entry's header for a path of `pathLength` bytes.
    package static func headerLength(pathLength: Int) -> Int {
        fixedHeaderLength + pathLength
    }

    /// An entry's header.
    ///
    /// - Parameters:
    ///   - path: the path below the folder, 1-``maximumPathLength`` bytes.
    ///   - length: the file's length.
    /// - Returns: the header's bytes.
    package static func header(path: [UInt8], length: UInt64) -> [UInt8] {
        precondition((1...maximumPathLength).contains(path.count), "a path of 1-\(maximumPathLength) bytes")
        var header: [UInt8] = []
        header.reserveCapacity(headerLength(pathLength: path.count))
        withUnsafeBytes(of: UInt16(path.count).bigEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: length.bigEndian) { header.append(contentsOf: $0) }
        header.append(contentsOf: path)
        return header
    }
}
