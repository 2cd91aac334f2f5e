#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The network interfaces of this host, for saying which one a run went through.
public enum NetworkInterface {
    /// The name of the interface that holds `address` ("eth0", "lo"), if any does.
    ///
    /// - Parameter address: an IPv4 or IPv6 address in text, with or without a zone ("fe80::1%eth0").
    /// - Returns: the interface name, or nil when no interface of this host has the address.
    public static func name(holding address: String) -> String? {
        let wanted = address.split(separator: "%").first.map(String.init) ?? address
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr, let text = Self.text(socketAddress) else { continue }
            if text == wanted || wanted == "::ffff:" + text {
                return String(cString: entry.pointee.ifa_name)
            }
        }
        return nil
    }

    private static func text(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var raw = v4.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var raw = v6.pointee.sin6_addr
                return inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
            }
        default:
            return nil
        }
    }
}
