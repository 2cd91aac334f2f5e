import NIOCore
import PeerConnectivityCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Socket addresses: their one text form, interfaces and scopes, IPv4-mapped forms, the system resolver.
extension Platform {
    /// The address of a socket address in the one form the library compares, limits and reports: an
    /// IPv4-mapped IPv6 address (an IPv4 peer of a dual-stack socket) as its IPv4 address, a link-local
    /// IPv6 address with its scope ("fe80::1%eth0", the interface's name, or its index when it has none).
    ///
    /// - Parameter address: an address a socket reported.
    /// - Returns: the text, or nil for a Unix domain socket address.
    package static func addressText(_ address: SocketAddress) -> String? {
        guard let text = address.ipAddress else { return nil }
        guard case .v6(let v6) = address else { return text }
        let normalized = IPAddressText.normalized(text)
        let scope = v6.address.sin6_scope_id
        guard normalized == text, scope != 0, IPAddressText.isLinkLocal(text) else { return normalized }
        return "\(text)%\(interfaceName(scope) ?? "\(scope)")"
    }

    /// "address:port" in the one text form, "[v6]:port" for IPv6: "192.0.2.7:7000", "[fe80::1%eth0]:7000".
    ///
    /// - Parameter address: an address a socket reported.
    package static func hostPort(_ address: SocketAddress) -> String {
        guard let text = addressText(address) else { return "\(address)" }
        let port = address.port ?? 0
        return IPAddressText.hostPort(text, port)
    }

    /// The name of the network interface with an index ("eth0"), or nil when there is none.
    ///
    /// - Parameter index: an interface index, as DNS-SD and `sin6_scope_id` give them.
    package static func interfaceName(_ index: UInt32) -> String? {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &name) != nil else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The interface an address of this host is on: the scope of a scoped IPv6 address, else the
    /// interface that has the address configured.
    ///
    /// - Parameter address: a local address, as a connected socket reports it.
    /// - Returns: the interface's index, or nil when no interface has it (or it is not an IP address).
    package static func interfaceIndex(of address: SocketAddress) -> UInt32? {
        if case .v6(let v6) = address, v6.address.sin6_scope_id != 0 { return v6.address.sin6_scope_id }
        guard let wanted = address.ipAddress.flatMap(addressBytes) else { return nil }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let socketAddress = current.pointee.ifa_addr, let name = current.pointee.ifa_name else { continue }
            let bytes: [UInt8]
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                var v4 = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                bytes = withUnsafeBytes(of: &v4) { Array($0) }
            case AF_INET6:
                var v6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                bytes = withUnsafeBytes(of: &v6) { Array($0) }
            default:
                continue
            }
            if bytes == wanted {
                let index = if_nametoindex(name)
                return index == 0 ? nil : index
            }
        }
        return nil
    }

    /// The interfaces that have an IPv6 link-local address (fe80::/10), by name, each once, in the
    /// system's order: where a link-local address without a scope may be reached.
    package static func linkLocalInterfaces() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var names: [String] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let socketAddress = current.pointee.ifa_addr, let name = current.pointee.ifa_name,
                Int32(socketAddress.pointee.sa_family) == AF_INET6
            else { continue }
            var v6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            let text = String(cString: name)
            if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0x80, !names.contains(text) { names.append(text) }
        }
        return names
    }

    /// A socket address from an address's bytes.
    ///
    /// - Parameters:
    ///   - bytes: 4 bytes (IPv4) or 16 (IPv6; an IPv4-mapped one becomes IPv4).
    ///   - port: the port.
    ///   - interface: the interface it was learned on: the scope of a link-local IPv6 address, else unused.
    /// - Returns: the address, or nil for another count of bytes.
    package static func socketAddress(bytes: [UInt8], port: Int, interface: UInt32 = 0) -> SocketAddress? {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return socketAddress(bytes: Array(bytes[12...]), port: port)
        }
        switch bytes.count {
        case 4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
            return SocketAddress(address, host: "")
        case 16:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
            // fe80::/10: reachable only through the interface it was learned on.
            if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0x80 { address.sin6_scope_id = interface }
            return SocketAddress(address, host: "")
        default:
            return nil
        }
    }

    /// The IPv4-mapped IPv6 form of an IPv4 address ("::ffff:192.0.2.7"), as a dual-stack IPv6 socket
    /// sends to it; any other address unchanged.
    ///
    /// - Parameter address: an address.
    package static func ipv4Mapped(_ address: SocketAddress) -> SocketAddress {
        guard case .v4(let v4) = address else { return address }
        var mapped = sockaddr_in6()
        mapped.sin6_family = sa_family_t(AF_INET6)
        mapped.sin6_port = v4.address.sin_port
        var bytes: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
        var ipv4 = v4.address.sin_addr
        bytes += withUnsafeBytes(of: &ipv4) { Array($0) }
        withUnsafeMutableBytes(of: &mapped.sin6_addr) { $0.copyBytes(from: bytes) }
        return SocketAddress(mapped, host: v4.host)
    }

    /// The host's addresses from the system resolver (getaddrinfo: /etc/hosts, DNS, and mDNS when
    /// nss-mdns is in /etc/nsswitch.conf), for TCP; blocks until it answers.
    ///
    /// - Parameters:
    ///   - host: a host name or an address.
    ///   - port: the port.
    /// - Returns: the addresses, in the resolver's order; empty when it has none.
    package static func systemAddresses(host: String, port: Int) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            defer { entry = current.pointee.ai_next }
            guard let socketAddress = current.pointee.ai_addr else { continue }
            switch current.pointee.ai_family {
            case AF_INET:
                let v4 = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                addresses.append(SocketAddress(v4, host: host))
            case AF_INET6:
                let v6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                addresses.append(SocketAddress(v6, host: host))
            default:
                continue
            }
        }
        return addresses
    }
}
