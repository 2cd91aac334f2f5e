/// How the runner reached the reflector.
public enum ConnectionMethod: String, Codable, Sendable {
    /// Found by DNS-SD (Avahi), then invited.
    case dnsSD = "dns-sd"
    /// Connected to a host and port given by the user (`--connect`).
    case direct
}
