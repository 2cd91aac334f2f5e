import PeerConnectivityCore

/// The version of this library and of the wire protocol it speaks, for logs and benchmark results.
public enum LibraryVersion {
    /// The library's version (semantic versioning).
    public static let current = "0.9.0"
    /// The wire protocol version in every HELLO; a peer of another version is refused on both sides.
    public static let wireProtocol = Int(WireProtocol.version)
}
