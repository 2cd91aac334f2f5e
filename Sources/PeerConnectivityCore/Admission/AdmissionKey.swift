/// What a per-address limit counts a source address as: the one place that says which addresses are one
/// source, for every limiter (``HandshakeAdmission``, ``InvitationRateLimiter``, the reflector's places).
///
/// A host with global IPv6 usually holds a whole /64 and may pick any address in it (privacy addresses, or
/// an attacker's thousands), so a limit per IPv6 address would let it take every place. Hence:
///
/// - a **global IPv6** address (unique-local `fc00::/7` included) counts as its prefix of
///   ``defaultIPv6PrefixLength`` (64) bits, written "fd00:1::/64";
/// - an **IPv4** address (an IPv4-mapped IPv6 one too) counts on its own: hosts there rarely hold many;
/// - a **link-local** IPv6 address (`fe80::/10`, with its scope) and the loopback address `::1` count on their
///   own: a link-local /64 is the whole link, every neighbour in it.
///
/// The prefix length is a setting (128: each IPv6 address on its own). Text that is no IP address counts on
/// its own, as it is.
package struct AdmissionKey: Hashable, Sendable, CustomStringConvertible {
    /// The prefix length a global IPv6 address counts as by default: one network.
    package static let defaultIPv6PrefixLength = 64

    /// The key's text: "192.0.2.7", "fd00:1::/64", "fe80::1%eth0".
    package let description: String

    /// The key of a source address.
    ///
    /// - Parameters:
    ///   - address: the address as a socket reports it (an IPv4-mapped one counts as its IPv4 address).
    ///   - ipv6PrefixLength: the bits of a global IPv6 address that name its source, 1-128 (clamped).
    package init(address: String, ipv6PrefixLength: Int = AdmissionKey.defaultIPv6PrefixLength) {
        let address = IPAddressText.normalized(address)
        let utf8 = address.utf8
        guard utf8.contains(UInt8(ascii: ":")), !utf8.contains(UInt8(ascii: "%")),
            let bytes = IPAddressText.ipv6Bytes(address[...])
        else {
            // IPv4, a scoped (link-local) address, or text that is no address: on its own, as it is.
            description = address
            return
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            // IPv4-mapped, in a form `normalized` does not know ("::ffff:c000:207").
            description = bytes[12...].map(String.init).joined(separator: ".")
            return
        }
        let isLoopback = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
        let isLinkLocal = bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80
        let length = min(max(ipv6PrefixLength, 1), 128)
        guard !isLoopback, !isLinkLocal, length < 128 else {
            description = IPAddressText.ipv6Text(bytes)
            return
        }
        let masked = bytes.enumerated().map { index, byte -> UInt8 in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8.max >> kept)
        }
        description = "\(IPAddressText.ipv6Text(masked))/\(length)"
    }
}
