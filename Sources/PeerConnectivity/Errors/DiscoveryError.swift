/// Why advertising or browsing could not start or go on.
public struct DiscoveryError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidServiceType
        case invalidDiscoveryInfo
        case daemonNotRunning
        case dnsServiceFailed
        case listenFailed
        case notRestartable
    }

    private let code: Code

    /// What went wrong, in a sentence a user can act on.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The service type breaks the rules (1-15 of a-z, 0-9 and '-', a letter, no edge or double hyphen).
    ///
    /// - Parameter detail: what is wrong.
    public static func invalidServiceType(_ detail: String) -> DiscoveryError {
        DiscoveryError(.invalidServiceType, detail)
    }

    /// A discoveryInfo key or value breaks the TXT record rules.
    ///
    /// - Parameter detail: which key and what is wrong.
    public static func invalidDiscoveryInfo(_ detail: String) -> DiscoveryError {
        DiscoveryError(.invalidDiscoveryInfo, detail)
    }

    /// avahi-daemon (or the D-Bus system bus) is not running.
    public static let daemonNotRunning = DiscoveryError(
        .daemonNotRunning,
        "avahi-daemon is not running: start it with Scripts/start-avahi.sh (or `avahi-daemon -D` with dbus running)"
    )

    /// A DNS-SD call failed.
    ///
    /// - Parameter detail: the call and its error code.
    public static func dnsServiceFailed(_ detail: String) -> DiscoveryError {
        DiscoveryError(.dnsServiceFailed, detail)
    }

    /// The advertiser could not listen on its TCP port.
    ///
    /// - Parameter detail: the address and the system error.
    public static func listenFailed(_ detail: String) -> DiscoveryError { DiscoveryError(.listenFailed, detail) }

    /// A stopped advertiser or browser cannot start again: make a new one.
    public static let notRestartable = DiscoveryError(
        .notRestartable,
        "a stopped advertiser or browser cannot be started again; make a new one"
    )

    /// Errors are equal when they are of the same kind.
    public static func == (lhs: DiscoveryError, rhs: DiscoveryError) -> Bool { lhs.code == rhs.code }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The detail.
    public var description: String { detail }
}
