import NIOCore

/// How the library's sockets listen on IPv6 and IPv4 at once: one IPv6 socket bound to "::" with
/// IPV6_V6ONLY off, which takes IPv4 peers too (they appear as IPv4-mapped addresses, "::ffff:192.0.2.7",
/// which ``Platform/addressText(_:)`` reports as "192.0.2.7"). Where the system has no IPv6 (a kernel
/// booted with ipv6.disable=1, a container without it), "0.0.0.0" instead. docs/design/JOINING-AND-ADDRESSES.md
/// says why one socket and not two.
package enum DualStack {
    /// The address that means every interface, IPv6 and IPv4.
    package static let anyAddress = "::"
    /// Every IPv4 interface: the fallback where an IPv6 socket cannot be made.
    package static let anyIPv4Address = "0.0.0.0"

    /// IPV6_V6ONLY, set to 0 on a socket bound to "::" so that it takes IPv4 too, whatever the system's
    /// default (`net.ipv6.bindv6only`) is.
    static let ipv6OnlyOption = ChannelOptions.Types.SocketOption(level: .ipv6, name: .ipv6_v6only)

    /// The addresses to try binding, in order, for the address a caller asked for: "::" and then
    /// "0.0.0.0" for "::", the address itself for any other.
    ///
    /// - Parameter host: the address asked for.
    static func bindAddresses(for host: String) -> [String] {
        host == anyAddress ? [anyAddress, anyIPv4Address] : [host]
    }
}
