/// IP addresses in text form as sockets report them, made comparable: a dual-stack socket reports an
/// IPv4 peer as an IPv4-mapped IPv6 address ("::ffff:192.0.2.7"), which names the same host as
/// "192.0.2.7" and must count, be limited and be reported as that.
///
/// Pure string work, so that the admission limits (``HandshakeAdmission``, ``InvitationRateLimiter``)
/// key on one form whatever socket the address came from.
package enum IPAddressText {
    /// The one form of an address: an IPv4-mapped IPv6 address becomes its IPv4 address; anything
    /// else is returned as it is (a scope, "fe80::1%eth0", is kept).
    ///
    /// - Parameter text: an address as a socket reports it: "::ffff:192.0.2.7", "192.0.2.7", "fe80::1%eth0".
    /// - Returns: "192.0.2.7" for the first two, the third unchanged.
    package static func normalized(_ text: String) -> String {
        let lower = text.lowercased()
        for prefix in ["::ffff:", "0:0:0:0:0:ffff:"] where lower.hasPrefix(prefix) {
            let rest = lower.dropFirst(prefix.count)
            if isDottedQuad(rest) { return String(rest) }
        }
        return text
    }

    /// Whether the address is a loopback address: 127.0.0.0/8 or ::1 (mapped or not).
    ///
    /// - Parameter text: an address in text form.
    package static func isLoopback(_ text: String) -> Bool {
        let address = withoutScope(normalized(text))
        if isDottedQuad(address) { return address.hasPrefix("127.") }
        return address == "::1" || address == "0:0:0:0:0:0:0:1"
    }

    /// Whether the address is an IPv6 link-local address (fe80::/10), which is reachable only through
    /// the interface named by its scope.
    ///
    /// - Parameter text: an address in text form, with or without its scope.
    package static func isLinkLocal(_ text: String) -> Bool {
        let address = withoutScope(text).lowercased()
        guard let colon = address.firstIndex(of: ":"), let first = UInt16(address[..<colon], radix: 16) else {
            return false
        }
        return first & 0xffc0 == 0xfe80
    }

    /// "host:port", or "[host]:port" for an IPv6 address (one with a colon), as in a URL's authority.
    ///
    /// - Parameters:
    ///   - host: an address in text form, or a host name.
    ///   - port: the port.
    package static func hostPort(_ host: String, _ port: Int) -> String {
        // The UTF-8 view's `contains`: `String.contains(_:)` with a string goes through `NSString` where
        // Foundation is imported, an allocation or more on each connection's way up.
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The address without its scope: "fe80::1%eth0" → "fe80::1".
    ///
    /// - Parameter text: an address in text form.
    package static func withoutScope(_ text: String) -> Substring {
        text.firstIndex(of: "%").map { text[..<$0] } ?? text[...]
    }

    /// Whether `text` is an IPv4 address in dotted-quad form: four decimal numbers of at most 255.
    private static func isDottedQuad(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy { $0.isASCII && $0.isNumber }
                && UInt16(part).map { $0 <= 255 } == true
        }
    }
}
