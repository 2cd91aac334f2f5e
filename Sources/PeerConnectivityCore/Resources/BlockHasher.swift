/// The digest of one resource block, of the connection's ``BlockDigestKind``: 8 bytes in big-endian order
/// (the order in which the reference implementations print them). The hasher takes the block in pieces of
/// any length.
///
/// A block's digest guards against disk and software faults between the sender's file and the
/// receiver's: bytes on the wire are authenticated by TLS, and the root over the block digests (SHA-256)
/// binds the list to the resource (docs/PROTOCOL.md, "Why XXH64 per 1 MiB block").
package struct BlockHasher: Sendable {
    private enum State: Sendable {
        case xxh64(XXH64Hasher)
        case xxh3(XXH3Hasher)
    }

    private var state: State

    /// A hasher of `kind` with nothing taken yet.
    package init(_ kind: BlockDigestKind) {
        switch kind {
        case .xxh64: state = .xxh64(XXH64Hasher())
        case .xxh3: state = .xxh3(XXH3Hasher())
        }
    }

    /// The kind of digest this hasher makes.
    package var kind: BlockDigestKind {
        switch state {
        case .xxh64: .xxh64
        case .xxh3: .xxh3
        }
    }

    /// The digest of `bytes` of `kind`, at once.
    package static func digest(_ bytes: UnsafeRawBufferPointer, _ kind: BlockDigestKind) -> [UInt8] {
        var hasher = BlockHasher(kind)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Takes the next bytes of the block.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .xxh64(var hasher):
            hasher.update(bytes)
            state = .xxh64(hasher)
        case .xxh3(var hasher):
            hasher.update(bytes)
            state = .xxh3(hasher)
        }
    }

    /// The digest of every byte taken: 8 bytes, big-endian.
    package func finalize() -> [UInt8] {
        let hash =
            switch state {
            case .xxh64(let hasher): hasher.finalize()
            case .xxh3(let hasher): hasher.finalize()
            }
        return withUnsafeBytes(of: hash.bigEndian) { Array($0) }
    }
}
