/// Which IP family a session's connections use when it dials: both (the default), or one only.
///
/// With both, a peer's IPv6 and IPv4 addresses are tried as Happy Eyeballs orders them (IPv6 first, the
/// families interleaved); with one, the other family's addresses are not tried at all, and a peer that has
/// none of the family cannot be reached.
public enum AddressFamily: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// IPv6 and IPv4.
    case any
    /// IPv4 only (as iperf3's `-4`).
    case ipv4
    /// IPv6 only (as iperf3's `-6`).
    case ipv6

    /// "any", "ipv4" or "ipv6".
    public var description: String { rawValue }
}
