import PeerConnectivityCore

/// Where a connection to a peer runs: this side's address and port, and the peer's, as the socket has them.
public struct ConnectionEndpoints: Sendable, Hashable, CustomStringConvertible {
    /// This side's IP address ("192.0.2.7", "fe80::1%eth0").
    public let localAddress: String
    /// This side's TCP port.
    public let localPort: Int
    /// The peer's IP address.
    public let remoteAddress: String
    /// The peer's TCP port.
    public let remotePort: Int

    /// Makes a description of a connection's endpoints.
    ///
    /// - Parameters:
    ///   - localAddress: this side's IP address.
    ///   - localPort: this side's port.
    ///   - remoteAddress: the peer's IP address.
    ///   - remotePort: the peer's port.
    public init(localAddress: String, localPort: Int, remoteAddress: String, remotePort: Int) {
        self.localAddress = localAddress
        self.localPort = localPort
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
    }

    /// "local -> remote", with IPv6 addresses in brackets: "192.0.2.7:51000 -> 192.0.2.9:7447".
    public var description: String {
        "\(Self.hostPort(localAddress, localPort)) -> \(Self.hostPort(remoteAddress, remotePort))"
    }

    /// "address:port", "[v6]:port" for an IPv6 address.
    public static func hostPort(_ address: String, _ port: Int) -> String {
        IPAddressText.hostPort(address, port)
    }
}
