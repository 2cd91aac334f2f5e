import NIOCore
import NIOPosix
import PeerConnectivityCore

/// Where to dial a peer: its host and port, and the addresses already known for it.
///
/// With no addresses, the host is dialled as it is when it is an address ("192.0.2.7", "::1",
/// "fe80::1%eth0"; a link-local one without its interface on every interface that has a link-local
/// address), else resolved with the system resolver (getaddrinfo). Either way every address is
/// tried, as ``HappyEyeballsStateMachine`` orders and staggers them.
package struct DialTarget: Sendable, CustomStringConvertible {
    /// The host name or address, for the system resolver and for messages.
    package var host: String
    /// The port.
    package var port: Int
    /// Addresses found some other way (DNS-SD's address records), tried instead of resolving `host`.
    package var addresses: [SocketAddress]

    /// Makes a target.
    ///
    /// - Parameters:
    ///   - host: a host name or an address.
    ///   - port: the port.
    ///   - addresses: addresses already known for the host; empty to resolve `host`.
    package init(host: String, port: Int, addresses: [SocketAddress] = []) {
        self.host = host
        self.port = port
        self.addresses = addresses
    }

    package var description: String {
        let hostPort = IPAddressText.hostPort(host, port)
        guard !addresses.isEmpty else { return hostPort }
        return "\(hostPort) (\(addresses.compactMap { Platform.addressText($0) }.joined(separator: ", ")))"
    }

    /// The addresses to try: those known, else `host` itself when it is an address, else the system
    /// resolver's answer, found on NIO's blocking-I/O thread pool.
    func resolve() async -> [SocketAddress] {
        if !addresses.isEmpty { return addresses }
        if let literal = try? SocketAddress(ipAddress: host, port: port) {
            // A link-local address without its interface (a member learned from MEMBERS when the interface it
            // was introduced over is not known): tried on every interface that has a link-local address.
            guard IPAddressText.isLinkLocal(host), !host.utf8.contains(UInt8(ascii: "%")) else { return [literal] }
            let scoped = Platform.linkLocalInterfaces().compactMap { interface in
                try? SocketAddress(ipAddress: "\(self.host)%\(interface)", port: self.port)
            }
            return scoped.isEmpty ? [literal] : scoped
        }
        let (name, port) = (host, port)
        let resolved = try? await NIOThreadPool.singleton.runIfActive {
            Platform.systemAddresses(host: name, port: port)
        }
        return resolved ?? []
    }
}
