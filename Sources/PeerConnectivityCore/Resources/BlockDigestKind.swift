/// The hash a connection's block digests are made with: in BLOCK, in a resource's root and in HAVE's
/// digest, for resources and folders alike. Both are 8 bytes, so no frame changes length with the kind.
///
/// A side of this version offers XXH3-64 in its INVITE or ACCEPT (``HandshakeFields/hashesBlocksWithXXH3``);
/// a connection whose peer offered it too hashes with ``xxh3``, any other with ``xxh64``. A link keeps the
/// kind its first connection agreed on, across the connections that resume it. Its raw value names it in
/// records kept on disk.
package enum BlockDigestKind: String, Sendable, Hashable, Codable {
    /// XXH64 with seed 0 (``XXH64Hasher``): the digest of protocol versions before the capability.
    case xxh64 = "xxh64"
    /// XXH3-64 with seed 0 and the reference's default secret (``XXH3Hasher``): its 64-byte stripes in
    /// vector lanes take half to two thirds of XXH64's time on one core.
    case xxh3 = "xxh3"

    /// The kind of a connection to a peer whose INVITE or ACCEPT said `peerFields` (this side offers XXH3-64
    /// always); ``xxh64`` when the peer said nothing (a connection that resumed a link).
    package init(agreedWith peerFields: HandshakeFields?) {
        self = peerFields?.hashesBlocksWithXXH3 == true ? .xxh3 : .xxh64
    }

    /// The hash's name as docs/PROTOCOL.md gives it: "XXH64" or "XXH3-64".
    package var protocolName: String {
        switch self {
        case .xxh64: "XXH64"
        case .xxh3: "XXH3-64"
        }
    }
}
